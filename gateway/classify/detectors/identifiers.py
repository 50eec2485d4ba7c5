"""Bank account numbers (IBAN): country code, check digits, BBAN; length and mod-97 checked.

Printed either compact or in groups of four, upper or lower case.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.textview import TextView
from gateway.classify.detectors.validators import IBAN_LENGTHS, iban_valid
from gateway.types import SensitiveSpan

# On the case-folded class map, so one pass finds "GB82WEST…" and "gb82west…" alike. It starts
# at the first check digit: a one-character literal is found with memchr, a longer one is
# searched several times slower. The lookbehinds require the country code and reject matches
# inside a longer token such as a hex digest. (The group marks the check digit: after a
# literal lookbehind, CPython may report match.start() at the lookbehind's start.)
_IBAN = re.compile(rb"(0)(?<=aa0)(?<![a0_]aa0)0(?: ?[a0]{4}){2,7}(?: ?[a0]{1,3})?")


def detect_ibans(view: TextView) -> list[SensitiveSpan]:
    spans: list[SensitiveSpan] = []
    for match in _IBAN.finditer(view.classes.lower()):
        span = _validated(view.text, match.start(1) - 2, match.end())
        if span is not None:
            spans.append(span)
    return spans


def _validated(text: str, start: int, end: int) -> SensitiveSpan | None:
    """The longest prefix of the match with the country's exact length that passes mod-97
    (a grouped IBAN may be followed by an upper-case word the pattern swallowed)."""
    country = text[start:start + 2].upper()
    length = IBAN_LENGTHS.get(country)
    if length is None:
        return None
    compact_len = 0
    stop = start
    while stop < end and compact_len < length:
        if text[stop] != " ":
            compact_len += 1
        stop += 1
    if compact_len != length:
        return None
    if stop < len(text) and text[stop].isalnum():
        return None  # the account would continue: wrong length
    compact = text[start:stop].replace(" ", "").upper()
    if not iban_valid(compact):
        return None
    return SensitiveSpan("iban", "pii", start, stop, 0.95)
