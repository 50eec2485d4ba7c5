"""Scores the sensitivity scanner on the shared data: span precision/recall per entity type on
Presidio's synthetic sentences, false alarms on its sentences without personal data, and
recall / false-positive rate on the detect-secrets and gitleaks test cases.

Matching is span-level. A gold span is found when predicted spans of the mapped type cover at
least half of it; a predicted span is correct when it overlaps a gold span of its type by at
least half of the shorter of the two (so one predicted address covering the three gold pieces
"28245" / "Puruntie 82" / "Apt. 595" counts for all three, and as one correct prediction).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

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
class PiiReport:
    scores: tuple[TypeScore, ...]
    clean_sentences: int
    false_alarms: int  # clean sentences with any finding

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
        examples.append(PiiExample(row["full_text"], spans, bool(row.get("spans"))))
    return examples


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


def evaluate_pii(scanner: SpanScanner, examples: Iterable[PiiExample]) -> PiiReport:
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
        for g in example.spans:
            gold[g.type] += 1
            covered = sum(_overlap(s.start, s.end, g.start, g.end) for s in spans
                          if s.type == g.type)
            found[g.type] += covered * 2 >= g.end - g.start
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
    return PiiReport(scores, clean, alarms)


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
