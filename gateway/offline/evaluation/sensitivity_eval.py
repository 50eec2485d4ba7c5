"""Scores the sensitivity scanner on the shared data: span precision/recall per entity type on
Presidio's synthetic sentences, false alarms on its sentences without personal data, and
recall / false-positive rate on the detect-secrets and gitleaks test cases.

The synthetic sentences are split by template (every sentence of a template on the same side):
about 30 % of the templates are held out, and detector work is tuned on the rest only, so
the held-out figure says how the detectors do on sentence shapes they were not fitted to.

Matching is span-level. A gold span is found when predicted spans of the mapped type cover at
least half of it; a predicted span is correct when it overlaps a gold span of its type by at
least half of the shorter of the two (so one predicted address covering the three gold pieces
"28245" / "Puruntie 82" / "Apt. 595" counts for all three, and as one correct prediction).
"""

from __future__ import annotations

import json
import random
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gateway.classify.payload_text import SpanScanner
from gateway.types import SensitiveSpan

# Presidio's entity names → ours. Entities with no counterpart here (GPE, ORGANIZATION,
# DATE_TIME, AGE, TITLE, NRP, ZIP_CODE, DOMAIN_NAME, US_DRIVER_LICENSE) are not scored; a
# prediction on them counts against precision.
ENTITY_MAP: dict[str, str] = {
    "CREDIT_CARD": "payment_card",
    "US_SSN": "us_ssn",
    "PHONE_NUMBER": "phone",
    "PERSON": "person",
    "STREET_ADDRESS": "street_address",
    "EMAIL_ADDRESS": "email",
    "IBAN_CODE": "iban",
    "IP_ADDRESS": "ip_address",
}
# For detect-secrets' public-IP plugin the thing to find is an IP address, not a secret.
_IP_PLUGIN = "ip_public"
# Templates whose salted CRC-32 falls in the first 3 of 10 buckets are held out (58 of 209
# templates, 437 of 1,500 sentences, 171 of 857 person names). Fixed: changing the salt or
# the share would hand the tuner a fresh look at the held-out sentences.
_SPLIT_SALT = "presidio-template-"
_HELD_OUT_BUCKETS = 3
Split = Literal["all", "tune", "holdout"]


@dataclass(frozen=True, slots=True)
class GoldSpan:
    type: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class PiiExample:
    text: str
    spans: tuple[GoldSpan, ...]  # mapped types only
    has_any_entity: bool  # any gold entity at all, mapped or not
    template_id: int = -1

    @property
    def split(self) -> Split:
        bucket = zlib.crc32(f"{_SPLIT_SALT}{self.template_id}".encode()) % 10
        return "holdout" if bucket < _HELD_OUT_BUCKETS else "tune"


@dataclass(frozen=True, slots=True)
class TypeScore:
    type: str
    gold: int
    found: int  # gold spans recalled
    predicted: int
    correct: int  # predicted spans matching a gold span

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0


@dataclass(frozen=True, slots=True)
class Interval:
    """A bootstrap confidence interval (resampling templates, not sentences: sentences of
    one template are near-copies, so resampling them would understate the spread)."""

    low: float
    high: float
    level: float


@dataclass(frozen=True, slots=True)
class PiiReport:
    scores: tuple[TypeScore, ...]
    clean_sentences: int
    false_alarms: int  # clean sentences with any finding
    # type → its recall's bootstrap interval (types with gold spans only)
    intervals: tuple[tuple[str, Interval], ...] = ()

    def interval(self, type_: str) -> Interval | None:
        return dict(self.intervals).get(type_)

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.clean_sentences if self.clean_sentences else 0.0


@dataclass(frozen=True, slots=True)
class SecretCase:
    source: str  # "detect-secrets" | "gitleaks"
    rule: str  # plugin or rule id the case was written for
    text: str
    should_flag: bool


@dataclass(frozen=True, slots=True)
class SecretScore:
    source: str
    positives: int
    detected: int
    traps: int
    false_positives: int
    missed_rules: tuple[tuple[str, int], ...]  # rule → missed positives
    trap_rules: tuple[tuple[str, int], ...]  # rule → traps flagged

    @property
    def recall(self) -> float:
        return self.detected / self.positives if self.positives else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.false_positives / self.traps if self.traps else 0.0


def load_pii_examples(path: Path) -> list[PiiExample]:
    """presidio_synth_dataset_v2.json: [{full_text, spans: [{entity_type, start_position,
    end_position}]}]."""
    examples = []
    for row in json.loads(path.read_text(encoding="utf-8")):
        spans = tuple(
            GoldSpan(ENTITY_MAP[s["entity_type"]], s["start_position"], s["end_position"])
            for s in row.get("spans", [])
            if s["entity_type"] in ENTITY_MAP
        )
        examples.append(PiiExample(row["full_text"], spans, bool(row.get("spans")),
                                   int(row.get("template_id", -1))))
    return examples


def select_split(examples: Iterable[PiiExample], split: Split) -> list[PiiExample]:
    return [e for e in examples if split == "all" or e.split == split]


def load_secret_cases(directory: Path) -> list[SecretCase]:
    cases = []
    for name, source in (("detect_secrets_cases.jsonl", "detect-secrets"),
                         ("gitleaks_cases.jsonl", "gitleaks")):
        path = directory / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rule = row.get("plugin") or (row.get("rule_ids") or ["?"])[0]
                cases.append(SecretCase(source, rule, row["text"], bool(row["should_flag"])))
    return cases


def evaluate_pii(scanner: SpanScanner, examples: Iterable[PiiExample],
                 rounds: int = 0, level: float = 0.9, seed: int = 0) -> PiiReport:
    """Span scores per type; with `rounds` > 0, also a bootstrap interval for each recall."""
    per_template: dict[int, tuple[Counter[str], Counter[str]]] = {}
    gold: Counter[str] = Counter()
    found: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    clean = alarms = 0
    for example in examples:
        spans = scanner.scan(example.text)
        if not example.has_any_entity:
            clean += 1
            alarms += bool(spans)
        template_gold, template_found = per_template.setdefault(
            example.template_id, (Counter(), Counter()))
        for g in example.spans:
            gold[g.type] += 1
            covered = sum(_overlap(s.start, s.end, g.start, g.end) for s in spans
                          if s.type == g.type)
            hit = covered * 2 >= g.end - g.start
            found[g.type] += hit
            template_gold[g.type] += 1
            template_found[g.type] += hit
        for s in spans:
            predicted[s.type] += 1
            correct[s.type] += any(
                g.type == s.type
                and _overlap(s.start, s.end, g.start, g.end) * 2
                >= min(s.end - s.start, g.end - g.start)
                for g in example.spans
            )
    types = sorted(set(gold) | set(predicted))
    scores = tuple(TypeScore(t, gold[t], found[t], predicted[t], correct[t]) for t in types)
    intervals = tuple(
        (t, _bootstrap_recall(list(per_template.values()), t, rounds, level, seed))
        for t in types if gold[t] and rounds > 0
    )
    return PiiReport(scores, clean, alarms, intervals)


def _bootstrap_recall(templates: list[tuple[Counter[str], Counter[str]]], type_: str,
                      rounds: int, level: float, seed: int) -> Interval:
    """Percentile interval of the pooled recall over templates drawn with replacement."""
    rng = random.Random(seed)
    cells = [(g[type_], f[type_]) for g, f in templates if g[type_]]
    values = []
    for _ in range(rounds):
        draw = [cells[rng.randrange(len(cells))] for _ in cells]
        values.append(sum(f for _, f in draw) / sum(g for g, _ in draw))
    values.sort()
    tail = (1 - level) / 2
    return Interval(values[int(tail * (rounds - 1))], values[int((1 - tail) * (rounds - 1))],
                    level)


def evaluate_secrets(scanner: SpanScanner, cases: Sequence[SecretCase]) -> list[SecretScore]:
    scores = []
    for source in sorted({c.source for c in cases}):
        missed: Counter[str] = Counter()
        tripped: Counter[str] = Counter()
        positives = detected = traps = false_positives = 0
        for case in (c for c in cases if c.source == source):
            flagged = _flags(scanner.scan(case.text), case.rule)
            if case.should_flag:
                positives += 1
                detected += flagged
                missed[case.rule] += not flagged
            else:
                traps += 1
                false_positives += flagged
                tripped[case.rule] += flagged
        scores.append(SecretScore(source, positives, detected, traps, false_positives,
                                  _nonzero(missed), _nonzero(tripped)))
    return scores


def _flags(spans: Sequence[SensitiveSpan], rule: str) -> bool:
    if rule == _IP_PLUGIN:
        return any(s.type == "ip_address" for s in spans)
    return any(s.category == "secret" for s in spans)


def _overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> int:
    return max(0, min(a_end, b_end) - max(a_start, b_start))


def _nonzero(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(((k, v) for k, v in counter.items() if v), key=lambda kv: -kv[1]))
