"""Lines of prose typed without capitals ("follow up with patricia desrosiers next week"),
true-cased so the person detector can read them like ordinary text.

Name evidence starts from capitalisation, so a line with no capital letter at all hides every
name in it. Such a line is re-written with a capital on each word that is not an everyday
word, a name particle or a single letter; the copy has exactly the original's offsets.
Lines that look like code are left alone: identifiers are lower-case on purpose, and a
variable called `adam` or `max` is nobody.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gateway.classify.detectors.textview import TextView

# A line with no ASCII capital, at least 12 characters, found on the class map. Led by the
# newline (a literal the regex engine searches for fast); the engine stops at the first
# capital, so ordinary lines cost a few characters each.
_LOWER_LINE = re.compile(rb"\n([^A\n]{12,})(?=\n|\Z)")
_FIRST_LOWER_LINE = re.compile(rb"[^A\n]{12,}(?=\n|\Z)")
# Bytes that mark code, markup or data rather than typed prose.
_CODE_MARKS = b"=(){};_<>[]#$|\\`*"
_WORD = re.compile(r"[^\W\d_]{2,}(?:'[^\W\d_]+)?")


def lower_case_lines(view: TextView, everyday: frozenset[str],
                     keep: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(offset, true-cased copy) for each capital-free line of prose in the text. `everyday`
    holds lower-case words left as they are; `keep` holds words left lower-case inside names
    (particles such as "van")."""
    classes = view.classes
    if b"a" not in classes:
        return
    first = _FIRST_LOWER_LINE.match(classes)
    spans = [first.span()] if first is not None else []
    spans.extend(m.span(1) for m in _LOWER_LINE.finditer(classes))
    for start, end in spans:
        segment = classes[start:end]
        if len(segment.translate(None, _CODE_MARKS)) != len(segment) or b" " not in segment:
            continue
        line = view.text[start:end]
        if line != line.lower():  # a capital outside ASCII ("Šárka")
            continue
        yield start, _WORD.sub(lambda m: _capitalised(m.group(), everyday, keep), line)


def _capitalised(word: str, everyday: frozenset[str], keep: frozenset[str]) -> str:
    if word in everyday or word in keep or word.split("'", 1)[0] in everyday:
        return word
    head = word[0].upper()
    return head + word[1:] if len(head) == 1 else word
