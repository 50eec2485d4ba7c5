"""Dates of birth: a valid calendar date close to a birth cue ("born", "DOB", "birthday").

Not every date is personal; only one that a cue ties to a person's birth is flagged. The cue
search runs only when a cheap keyword check says a cue exists at all.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.textview import TextView
from gateway.types import SensitiveSpan

_CUES = (b"born", b"birth", b"dob")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_DATE = re.compile(
    r"(?<![\d/.-])(?:(?P<y1>\d{4})[-/.](?P<m1>\d{1,2})[-/.](?P<d1>\d{1,2})"
    r"|(?P<a2>\d{1,2})[-/.](?P<b2>\d{1,2})[-/.](?P<y2>\d{4}|\d{2}))(?![\d/]|\.\d)"
    r"|\b(?:(?P<d3>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m3>" + _MONTH + r")\.?,?\s+"
    r"(?P<y3>\d{4})"
    r"|(?P<m4>" + _MONTH + r")\.?\s+(?P<d4>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y4>\d{4}))\b",
    re.IGNORECASE,
)
_WINDOW_AFTER = 60
_WINDOW_BEFORE = 40


def detect_birth_dates(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    spans: list[SensitiveSpan] = []
    last_end = -1
    for cue in view.occurrences(*_CUES):
        lo = max(0, cue - _WINDOW_BEFORE, last_end)
        hi = min(len(text), cue + _WINDOW_AFTER)
        for match in _DATE.finditer(text, lo, hi):
            if _plausible(match):
                spans.append(SensitiveSpan("date_of_birth", "pii", match.start(), match.end(),
                                           0.85))
                last_end = match.end()
    return spans


def _plausible(match: re.Match[str]) -> bool:
    groups = match.groupdict()
    if groups["y1"]:
        return _valid(int(groups["y1"]), int(groups["m1"]), int(groups["d1"]))
    if groups["y2"]:
        year = int(groups["y2"])
        year += 1900 if year >= 30 and year < 100 else (2000 if year < 30 else 0)
        first, second = int(groups["a2"]), int(groups["b2"])
        return _valid(year, first, second) or _valid(year, second, first)
    if groups["y3"]:
        return _valid(int(groups["y3"]), _month(groups["m3"]), int(groups["d3"]))
    return _valid(int(groups["y4"]), _month(groups["m4"]), int(groups["d4"]))


def _month(name: str) -> int:
    return _MONTHS.index(name[:3].lower()) + 1


def _valid(year: int, month: int, day: int) -> bool:
    return 1880 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31
