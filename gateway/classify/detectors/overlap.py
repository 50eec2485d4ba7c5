"""Resolves overlapping findings to one span per stretch of text.

When detectors disagree about the same characters, the most specific finding wins: a
validated identifier (checksum, issuer prefix) beats a pattern, a pattern beats a heuristic
like a name; then the more confident, then the longer span. Reserved stand-ins rank below
every real finding, so they only fill gaps and never change which real findings are kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from gateway.types import SensitiveSpan

_SPECIFICITY: dict[str, int] = {
    "payment_card": 90, "iban": 90, "us_ssn": 88, "email": 85, "ip_address": 80,
    "medical_record_number": 75, "health_plan_number": 75, "phone": 70, "date_of_birth": 65,
    "diagnosis": 60, "street_address": 50, "person": 40,
}
_SECRET = 95  # every "secret.*" type
_CUSTOM = 100  # tenant-defined: the tenant asked for exactly this


def specificity(span_type: str) -> int:
    if span_type.startswith("secret."):
        return _SECRET
    if span_type.startswith("custom."):
        return _CUSTOM
    return _SPECIFICITY.get(span_type, 30)


def resolve(spans: Iterable[SensitiveSpan]) -> list[SensitiveSpan]:
    """Non-overlapping spans in text order; exact duplicates collapse into one."""
    ranked = sorted(
        {s for s in spans if s.end > s.start},
        key=lambda s: (s.reserved, -specificity(s.type), -s.confidence, s.start - s.end,
                       s.start),
    )
    starts: list[int] = []  # accepted spans, sorted by start; they never overlap each other
    ends: list[int] = []
    kept: list[SensitiveSpan] = []
    for span in ranked:
        index = bisect.bisect_left(starts, span.end)
        # The accepted span starting just before span.end is the only one that can overlap.
        if index > 0 and ends[index - 1] > span.start:
            continue
        starts.insert(index, span.start)
        ends.insert(index, span.end)
        kept.insert(index, span)
    return kept
