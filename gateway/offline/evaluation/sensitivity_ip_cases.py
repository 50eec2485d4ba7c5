"""Scores IP address detection on Presidio's recognizer test cases, sorted by what the policy
says an address is: public (routed on), documentation (a masked stand-in) or internal
(private, loopback, link-local: not reported), plus the cases that hold no address.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gateway.classify.detectors.validators import ip_kind
from gateway.classify.payload_text import SpanScanner
from gateway.offline.evaluation.sensitivity_eval import Interval
from gateway.types import SensitiveSpan

AddressClass = Literal["public", "documentation", "internal"]
CLASSES: tuple[AddressClass, ...] = ("public", "documentation", "internal")
_DECORATION = re.compile(r"%[^/]*|/\d*$")  # zone id, prefix length


@dataclass(frozen=True, slots=True)
class IpCase:
    text: str
    spans: tuple[tuple[int, int], ...]  # expected address spans; () for a case without one


@dataclass(frozen=True, slots=True)
class ClassScore:
    address_class: AddressClass
    gold: int
    routed: int  # found by `scan`: what routing acts on
    masked: int  # found by `scan_for_redaction`: what a redacted copy hides
    routed_interval: Interval | None
    masked_interval: Interval | None


@dataclass(frozen=True, slots=True)
class IpCaseReport:
    scores: tuple[ClassScore, ...]
    negatives: int  # cases expecting no address
    negatives_flagged: int  # of them, cases with any IP span, stand-ins included
    unpositioned: int  # positive cases without positions (skipped)


def load_ip_cases(path: Path) -> tuple[list[IpCase], int]:
    """presidio_recognizer_cases.jsonl's IP_ADDRESS rows; also how many positive rows carry
    no positions (they cannot be scored by span and are left out)."""
    cases: list[IpCase] = []
    unpositioned = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else {}
        if "IP_ADDRESS" not in (row.get("entities") or ()):
            continue
        positions = tuple((int(a), int(b)) for a, b in row.get("expected_positions") or ())
        if row.get("expected_len") and not positions:
            unpositioned += 1
            continue
        cases.append(IpCase(row["text"], positions))
    return cases, unpositioned


def address_class(literal: str) -> AddressClass | None:
    """The policy's reading of an expected address: None when it does not parse at all."""
    bare = _DECORATION.sub("", literal.strip("[]"))
    kind = ip_kind(bare)
    if kind is not None:
        return kind
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        return None
    return "internal"


def evaluate_ip_cases(scanner: SpanScanner, cases: Sequence[IpCase], unpositioned: int = 0,
                      rounds: int = 2000, level: float = 0.9, seed: int = 0) -> IpCaseReport:
    hits: dict[AddressClass, list[tuple[bool, bool]]] = {c: [] for c in CLASSES}
    negatives = flagged = 0
    for case in cases:
        masked = [s for s in scanner.scan_for_redaction(case.text) if s.type == "ip_address"]
        routed = [s for s in masked if not s.reserved]
        if not case.spans:
            negatives += 1
            flagged += bool(masked)
            continue
        for start, end in case.spans:
            cls = address_class(case.text[start:end])
            if cls is not None:
                hits[cls].append((_covered(routed, start, end), _covered(masked, start, end)))
    scores = tuple(
        ClassScore(cls, len(h), sum(r for r, _ in h), sum(m for _, m in h),
                   _bootstrap([r for r, _ in h], rounds, level, seed),
                   _bootstrap([m for _, m in h], rounds, level, seed))
        for cls, h in hits.items()
    )
    return IpCaseReport(scores, negatives, flagged, unpositioned)


def _covered(spans: Sequence[SensitiveSpan], start: int, end: int) -> bool:
    """Found when spans cover at least half of it (the synthetic set's rule)."""
    covered = sum(max(0, min(s.end, end) - max(s.start, start)) for s in spans)
    return covered * 2 >= end - start


def _bootstrap(found: list[bool], rounds: int, level: float, seed: int) -> Interval | None:
    """Percentile interval of recall over cases drawn with replacement."""
    if not found or rounds <= 0:
        return None
    rng = random.Random(seed)
    n = len(found)
    values = sorted(sum(found[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    tail = (1 - level) / 2
    return Interval(values[int(tail * (rounds - 1))], values[int((1 - tail) * (rounds - 1))],
                    level)
