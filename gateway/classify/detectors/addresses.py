"""Street addresses: house number + street name + street type (or its European forms), unit
designators, PO and military boxes, "the corner of X and Y", with the city/postcode lines that
follow.

Anchored on the class map where a number meets a word ("86036 Rua", "Puruntie 82"); the street
patterns then run only in a small window around each anchor.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.address_words import (
    CONTEXT,
    CONTINUATION_PART,
    CONTINUATION_UNIT,
    CORNER,
    GATE_WORDS,
    NAMED,
    SANDWICH,
    STREET_ABBREVIATIONS,
    STREET_LINE,
    STREET_SUFFIXES,
    STREET_TYPES,
    STRENGTH,
)
from gateway.classify.detectors.name_words import COMMON_CAPITALISED
from gateway.classify.detectors.textview import TextView
from gateway.types import SensitiveSpan

# A number (not inside a token) followed by a capitalised word; a word followed by a number.
_NUMBER_THEN_WORD = re.compile(rb"0(?<![Aa0_.,:/#$-]0)0{0,5}[aA]? [A?]")  # "221B Baker"
_WORD_THEN_NUMBER = re.compile(rb"0(?<=[Aa?.] 0)0{0,5}(?![0Aa_%])")
_STREET_WORDS = GATE_WORDS | frozenset(STREET_ABBREVIATIONS) | {"apt.", "unit"}
_WINDOW = 70
_LETTERS = re.compile(r"[^\W\d_]+")
_LINE_PREFIX = frozenset(">?*-•\t ")
_THRESHOLD = 0.6
_STREET_TYPES_SET = frozenset(STREET_TYPES)  # lower case, as a street type is in prose
# English words of a sentence that no street name holds between its number and its type.
_FUNCTION_WORDS = frozenset(
    "if i you we they he she it can could will would should must is are was were be been "
    "there here this that these those to of for with from by than then when where which "
    "who what how a an as so not no per half".split()
)
_MAX_PARTS = 4


def detect_addresses(view: TextView) -> list[SensitiveSpan]:
    text = view.text
    found: list[tuple[int, int, float]] = []
    reach = -1
    for anchor, number_first in _anchors(view):
        if anchor < reach:
            continue  # already inside an address found from an earlier anchor
        best = _street_at(view, anchor, number_first)
        if best is not None:
            found.append(best)
            reach = best[1]
    for at in view.occurrences(b"corner of "):
        match = CORNER.match(text, max(0, at - 4))
        if match is not None:
            found.append((match.start(), match.end(), 0.75))
    return _merged(found)


def _anchors(view: TextView) -> list[tuple[int, bool]]:
    """(offset of the number, whether the number comes first: "86036 Rua" vs "Puruntie 82")."""
    text = view.text
    classes = view.classes
    anchors = [(m.start(), True) for m in _NUMBER_THEN_WORD.finditer(classes)]
    for match in _WORD_THEN_NUMBER.finditer(classes):
        word_end = match.start() - 1
        word_start = text.rfind(" ", 0, word_end) + 1
        word = text[max(word_start, text.rfind("\n", 0, word_end) + 1):word_end]
        lowered = word.lower()
        if lowered in _STREET_WORDS or lowered.endswith(STREET_SUFFIXES) or (
            len(word) >= 3
            and classes[word_end - len(word):word_end][:1] in (b"A", b"?")
            and word not in COMMON_CAPITALISED  # "Scenario 1", "Chapter 3", "December 1993"
        ):
            anchors.append((match.start(), False))
    anchors.sort()
    return anchors


def _street_at(view: TextView, anchor: int, number_first: bool) -> tuple[int, int, float] | None:
    text = view.text
    found = _street_line(text, view.lower, anchor, number_first)
    if found is None:
        return None
    start, end, strength = found
    score = strength
    if CONTEXT.search(view.lower, max(0, start - 80), start):
        score += 0.25
    end, unit, postcode = _continued(view, end)
    score += 0.1 * unit + 0.1 * postcode
    if score < _THRESHOLD:
        return None
    return start, end, round(min(0.95, score), 2)


def _street_line(
    text: str, view_lower: bytes, anchor: int, number_first: bool
) -> tuple[int, int, float] | None:
    """The strongest street form around the anchor: an explicit street word first, then the
    number-words-number shape, then (scored low, so only with a cue) words + number."""
    lo = max(0, anchor - _WINDOW)
    hi = min(len(text), anchor + _WINDOW)
    best: tuple[int, int, float] | None = None
    words = _LETTERS.findall(text[lo:hi].lower())
    line_start = max(lo, text.rfind("\n", 0, anchor) + 1)
    if not GATE_WORDS.isdisjoint(words) or any(w.endswith(STREET_SUFFIXES) for w in words):
        best = _strongest(text, anchor, line_start, hi, number_first)
    if best is not None:
        return best
    # The number-words-number form starts at a number-then-word anchor (or one number before).
    for start in (text.rfind(" ", lo, anchor - 1) + 1, anchor):
        sandwich = SANDWICH.match(text, start, hi) if start > 0 or anchor == 0 else None
        if sandwich is not None and sandwich.end() > anchor:
            return sandwich.start(), sandwich.end(), STRENGTH["sandwich"]
    if not CONTEXT.search(view_lower, max(0, anchor - 90), anchor):
        return None  # words + number is an address only after an address cue
    for word_start in _word_starts(text, line_start, anchor):
        match = NAMED.match(text, word_start, hi)
        if match is not None and match.end() > anchor:
            return match.start(), match.end(), STRENGTH["named"]
    return None


def _strongest(
    text: str, anchor: int, line_start: int, hi: int, number_first: bool
) -> tuple[int, int, float] | None:
    """Anchored attempts at the few word starts that can begin the street line, not a search
    over every offset of the window: a house number starts it (or one number before it), a
    street name ending in a number starts up to five words earlier."""
    best: tuple[int, int, float] | None = None
    starts = _word_starts(text, line_start, anchor, 1 if number_first else 5)
    for start in (*starts, anchor):
        match = STREET_LINE.match(text, start, hi)
        if match is not None and match.lastgroup in ("typed", "typed_after") and _prose(
                match.group(), match.lastgroup):
            continue
        if match is not None and match.end() >= anchor:
            strength = STRENGTH[match.lastgroup or "typed"]
            if best is None or (strength, match.end() - start) > (best[2], best[1] - best[0]):
                best = (match.start(), match.end(), strength)
    return best


def _prose(street: str, form: str) -> bool:
    """A sentence that reads as a street line. Of the name-then-type form, lower-case ASCII
    ("be written to row 4"; "hegyalja út 98" keeps its letters outside ASCII). Of either
    form, a lower-case English street type among words no street name holds ("If I can walk
    1700 steps", "April 10, there is a single row", "1 G acceleration to half way")."""
    if not street.isascii():
        return False
    if form == "typed_after" and street[0].islower():
        return True
    words = _LETTERS.findall(street)
    return any(w in _STREET_TYPES_SET for w in words) and not _FUNCTION_WORDS.isdisjoint(
        w.lower() for w in words)


def _word_starts(text: str, lo: int, anchor: int, count: int = 3) -> list[int]:
    """Starts of up to `count` words before the anchor on its line, farthest first (a line's
    quoting prefix such as "> " or "??? " is not part of its first word)."""
    starts = []
    position = anchor
    for _ in range(count):
        space = text.rfind(" ", lo, position - 1)
        start = space + 1 if space != -1 else lo
        while start < position and text[start] in _LINE_PREFIX:
            start += 1
        if start >= position:
            break
        starts.append(start)
        if space == -1:
            break
        position = space
    return starts[::-1]


def _continued(view: TextView, end: int) -> tuple[int, bool, bool]:
    """Extend over unit designators and the city / region / postcode / country parts."""
    text = view.text
    unit = False
    for _ in range(2):
        match = CONTINUATION_UNIT.match(text, end)
        if match is None:
            break
        end, unit = match.end(), True
    postcode = False
    for _ in range(_MAX_PARTS):
        match = CONTINUATION_PART.match(text, end)
        if match is None or len(match.group(1)) > 40:
            break
        end = match.end()
        if b"00" in view.classes[match.start(1):match.end(1)]:
            postcode = True
            break  # the postcode closes the address
        unit_after = CONTINUATION_UNIT.match(text, end)
        if unit_after is not None:
            end = unit_after.end()
    return end, unit, postcode


def _merged(found: list[tuple[int, int, float]]) -> list[SensitiveSpan]:
    """Overlapping findings are one address: keep their union and the best confidence."""
    spans: list[SensitiveSpan] = []
    for start, end, confidence in sorted(found):
        if spans and start < spans[-1].end:
            last = spans.pop()
            spans.append(SensitiveSpan("street_address", "pii", last.start, max(end, last.end),
                                       max(confidence, last.confidence)))
        else:
            spans.append(SensitiveSpan("street_address", "pii", start, end, confidence))
    return spans
