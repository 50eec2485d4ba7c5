"""Context around a candidate name: honorifics and cue phrases before it, attribution verbs
after it, and page layout (a name alone on the line heading a contact block, a speaker label).

Each check first looks at the single character next to the word, so the slicing and suffix
tests run only where a cue could possibly end or begin.
"""

from __future__ import annotations

import re

from gateway.classify.detectors.name_cues_world import TITLES_WITH_DOT, TITLES_WORLD, view_form
from gateway.classify.detectors.name_words import (
    CUES_AFTER,
    CUES_BEFORE,
    MEDIUM_CUES,
    TITLES,
    WEAK_CUES,
)
from gateway.classify.detectors.textview import TextView

# Titles in the view's form (other languages' "señor" is "se?or" there), escaped: "sig.ra"
# holds a dot and every non-ASCII letter a "?".
_TITLE_FORMS = sorted({*(t.encode() for t in TITLES), *map(view_form, TITLES_WORLD)})
_TITLE = re.compile(rb"\b(?:(?:" + b"|".join(map(re.escape, _TITLE_FORMS)) + rb")\.?|"
                    + b"|".join(re.escape(view_form(t)) for t in TITLES_WITH_DOT) + rb") \Z")
_STRONG_CUES = tuple(c for c in CUES_BEFORE if c not in WEAK_CUES and c not in MEDIUM_CUES)
_MEDIUM_CUES = tuple(MEDIUM_CUES)
_WEAK_CUES = tuple(WEAK_CUES)
_LINE_PREFIX = b" \t>?*-"
# A chat export's line prefix: "[13:05] ", "10:45 AM ", "[12/03/24, 10:45:12] ",
# "12/03/2024, 10:45 - ".
_TIMESTAMP = re.compile(r"[\[(]?(?:\d{1,4}[./-]\d{1,2}[./-]\d{1,4},? )?\d{1,2}[:.]\d{2}"
                        r"(?:[:.]\d{2})?(?: ?[AaPp]\.?[Mm]\.?)?[\])]?(?: -)? ")
_TIMESTAMP_CHARS = 28
# The last word of every cue and title: the word before a candidate must be one of these
# before any cue phrase is compared (one set lookup instead of a dozen suffix tests).
_CUE_LAST_WORDS = frozenset(
    cue.rstrip().rsplit(None, 1)[-1] if cue.strip() else b""
    for cue in (*CUES_BEFORE, *(t + b" " for t in _TITLE_FORMS), *(t + b". " for t in _TITLE_FORMS),
                *(view_form(t) + b" " for t in TITLES_WITH_DOT))
)

def cue_score(view: TextView, start: int, end: int) -> float:
    score = 0.0
    # After an elided article the cue is the rest of the word ("l'avv. Gallo").
    if start > 1 and view.raw[start - 1] in b" \t\n" and (
        (word := _previous_word(view.lower, start)) in _CUE_LAST_WORDS
        or (b"'" in word and word.rsplit(b"'", 1)[1] in _CUE_LAST_WORDS)
    ):
        # Cue phrases end in one space; "Name:    Martim" and "Name:\tX" count as well.
        before = view.lower[max(0, start - 30):start].rstrip(b" \t") + b" "
        if _TITLE.search(before):
            score += 0.9
        elif before.endswith(_STRONG_CUES):
            score += 0.75
        elif before.endswith(_MEDIUM_CUES):
            score += 0.6
        elif before.endswith(_WEAK_CUES):
            score += 0.3
    if end < len(view.raw) and view.raw[end] in b" ,'-" and view.text.startswith(CUES_AFTER, end):
        score += 0.6
    return score


def _previous_word(lower: bytes, start: int) -> bytes:
    end = start - 1
    while end > 0 and lower[end - 1] in b" \t":
        end -= 1
    return lower[lower.rfind(b" ", max(0, end - 24), end) + 1:end].rsplit(b"\n", 1)[-1]


def starts_a_line(text: str, start: int) -> bool:
    """Whether `start` begins its line, or follows only a chat export's timestamp there
    ("[13:05] Amy: …", "12/03/24, 10:45 - Amy: …")."""
    if start == 0 or text[start - 1] == "\n":
        return True
    before = text[start - 2] if start >= 2 else ""
    if text[start - 1] != " " or not before or before not in "])-.0123456789Mm":
        return False  # the common case, cheaply: a timestamp ends in one of these
    line_start = text.rfind("\n", max(0, start - _TIMESTAMP_CHARS), start) + 1
    if line_start == 0 and start > _TIMESTAMP_CHARS:
        return False
    return _TIMESTAMP.fullmatch(text, line_start, start) is not None


def opens_a_line_of_speech(text: str, end: int) -> bool:
    """A colon right after `end` and then words on the same line ("Amy: see you"): a
    heading ends its line at the colon ("Long Straddles:") and a table cell is followed by the
    next cell ("Összesen:;;2067560")."""
    if text[end:end + 2] not in (": ", ":\t"):
        return False
    line_end = text.find("\n", end)
    return bool(text[end + 2:line_end if line_end != -1 else len(text)].strip())


def layout_score(view: TextView, start: int, end: int, speaker: bool = True) -> float:
    """A name alone on its line heading a contact block, or (with `speaker`) a speaker label
    ("Amy: …", also after a chat export's timestamp): a heading takes a colon too ("Crew
    Selection:"), so the label counts only beside some sign in the words themselves."""
    raw = view.raw
    line_start = raw.rfind(b"\n", max(0, start - 6), start) + 1
    if (line_start == 0 and start > 6) or raw[line_start:start].strip(_LINE_PREFIX):
        speaks = (speaker and opens_a_line_of_speech(view.text, end)
                  and starts_a_line(view.text, start))
        return 0.3 if speaks else 0.0
    line_end = raw.find(b"\n", end)
    rest = raw[end:line_end if line_end != -1 else len(raw)]
    if rest[:1] == b":":
        return 0.3 if speaker and opens_a_line_of_speech(view.text, end) else 0.0
    if rest.strip() or line_end == -1:
        return 0.0
    previous_line = raw[raw.rfind(b"\n", 0, max(0, line_start - 1)) + 1:line_start]
    if b"0" in view.classes[line_start - len(previous_line):line_start]:
        return 0.0  # a line inside an address block (the city), not a name heading it
    next_line_end = raw.find(b"\n", line_end + 1)
    if next_line_end != -1 and next_line_end - line_end > 48:
        return 0.0  # a heading over running text, not a contact block
    window_end = min(len(raw), end + 200)
    if raw.find(b"@", end, window_end) != -1 or view.classes.find(b"000", end, window_end) != -1:
        return 0.35
    return 0.0
