"""Redaction masks what classification found, wherever it recurs.

Redaction rescans each string of a payload on its own, so a finding that needed the whole
request (a second opinion such as Presidio, or context from another message) would otherwise
leave for an external backend unmasked even though it routed the request. This scanner adds
every whole-word occurrence of the values classification found to what the rescan finds.
The values live in memory for one request only, like the redaction map.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from gateway.classify.detectors.overlap import resolve
from gateway.classify.payload_text import SpanScanner
from gateway.types import SensitiveSpan


class WithKnownValues:
    __slots__ = ("_base", "_pattern", "_spans")

    def __init__(self, base: SpanScanner, found: Iterable[tuple[str, SensitiveSpan]]) -> None:
        self._base = base
        by_value: dict[str, SensitiveSpan] = {}
        for value, span in found:
            if value.strip():
                by_value.setdefault(value, span)
        # Longest first: the alternation then prefers "Ada Lovelace" to "Ada".
        ordered = sorted(by_value, key=len, reverse=True)
        self._spans = by_value
        self._pattern = re.compile("|".join(map(_whole, ordered))) if ordered else None

    def __repr__(self) -> str:
        return f"WithKnownValues({len(self._spans)} values)"  # never the values themselves

    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]:
        spans = self._base.scan_for_redaction(text)
        if self._pattern is None:
            return spans
        known = [dataclasses.replace(self._spans[m.group()], start=m.start(), end=m.end())
                 for m in self._pattern.finditer(text)]
        return resolve([*spans, *known]) if known else spans


def _whole(value: str) -> str:
    """The value, not as part of a longer word ("Ann" is not masked inside "Annual")."""
    left = r"(?<!\w)" if _wordy(value[0]) else ""
    right = r"(?!\w)" if _wordy(value[-1]) else ""
    return left + re.escape(value) + right


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"
