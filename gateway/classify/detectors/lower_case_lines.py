"""Lines of prose typed without capitals ("follow up with patricia desrosiers next week"),
true-cased so the person detector can read them like ordinary text.

Name evidence starts from capitalisation, so a line with no capital letter at all hides every
name in it. Such a line, when it holds a known given name, is re-written with a capital on
each word that is not an everyday word, a name particle or a single letter; the copy has
exactly the original's offsets. Lines that look like code are left alone: identifiers are
lower-case on purpose, and a variable called `adam` is nobody. Lines without a given name are
not re-read: they are most lines of hard-wrapped documents, and reading them would cost a
regex pass and a word loop each for names that a lone surname rarely reveals.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from itertools import accumulate

from gateway.classify.detectors.literals import LiteralSet, literal_set
from gateway.classify.detectors.textview import TextView

# A line that starts with a lower-case letter (so not indented code) and has no ASCII capital,
# at least 12 characters, found on the class map. Led by the newline, a literal the regex
# engine searches for fast; possessive, so a capital ends the attempt without backtracking.
_LOWER_LINE = re.compile(rb"\n([a?][^A\n]{11,}+)(?=\n|\Z)")
_FIRST_LOWER_LINE = re.compile(rb"[a?][^A\n]{11,}+(?=\n|\Z)")
# What marks code, markup or data rather than typed prose: these bytes, an attribute access
# ("os.path"), an import line, a docstring's quotes.
_CODE_MARKS = b"=(){};_<>[]#$|\\`*/"
_ATTRIBUTE = re.compile(rb"a\.a")
_WORD = re.compile(r"[^\W\d_]{2,}(?:'[^\W\d_]+)?")
# Words too short or too common to be in the everyday-word lists, which are kept for words
# seen capitalised ("Of" never starts a sentence); in a true-cased line they stay lower-case.
_FUNCTION_WORDS = frozenset(
    """of the a an and or nor but to in on at by for with from as into onto off out up down over
    under is are was were be been being am has have had do does did it its this that these
    those i me my mine we us our you your he him his she her hers they them their not no so if
    then than too very just also all any some each every both such own same other which who
    whom whose what when where why how there here can could would should will shall may might
    must let got get gets getting like via per im ive id youre dont cant wont isnt""".split()
)
# Punctuation that may touch a word, turned into spaces before the line is split into words.
_SEPARATORS = str.maketrans(dict.fromkeys(",.;:!?\"'-", " "))


def lower_case_lines(view: TextView, given: frozenset[str], everyday: frozenset[str],
                     keep: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(offset, true-cased copy) for each capital-free line of prose holding a word of
    `given` (lower-case given names). `everyday` holds lower-case words left as they are;
    `keep` holds words left lower-case inside names (particles such as "van")."""
    classes = view.classes
    if b"a" not in classes:
        return
    first = _FIRST_LOWER_LINE.match(classes)
    spans = [first.span()] if first is not None else []
    spans.extend(m.span(1) for m in _LOWER_LINE.finditer(classes))
    if not spans:
        return
    text = view.text
    lines = [text[start:end] for start, end in spans]
    for index in _naming(lines, given):
        start, end = spans[index]
        line = lines[index]
        if given.isdisjoint(line.translate(_SEPARATORS).split()) or line != line.lower():
            continue  # no given name, or a capital outside ASCII ("Šárka")
        segment = classes[start:end]
        if (
            b" " not in segment
            or len(segment.translate(None, _CODE_MARKS)) != len(segment)
            or _ATTRIBUTE.search(segment) is not None
            or _looks_like_code(view.raw[start:end])
        ):
            continue
        yield start, _WORD.sub(lambda m: _capitalised(m.group(), everyday, keep), line)


def _naming(lines: list[str], given: frozenset[str]) -> list[int]:
    """Indexes of the lines that may hold a word of `given`: each line where one of its words
    occurs with no ASCII letter or digit touching it (a superset of the lines where one is a
    whole word once separators are spaces), found for many lines in one compiled pass instead
    of a translate and split per line: a hard-wrapped document has hundreds of capital-free
    lines, of which a few name someone."""
    if len(lines) <= _FEW_LINES:
        return list(range(len(lines)))
    # surrogatepass: a lone surrogate (from a JSON escape) must not fail the scan.
    encoded = [line.encode("utf-8", "surrogatepass") for line in lines]
    ends = list(accumulate(len(line) + 1 for line in encoded))  # each line and its "\n"
    hits = given_literals(given).bounded(b"\n".join(encoded), _WORD_BYTES)
    return sorted({bisect_right(ends, at) for at in hits})


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


_FEW_LINES = 16  # below this, checking every line costs less than one compiled pass


@lru_cache(maxsize=4)
def given_literals(given: frozenset[str]) -> LiteralSet:
    """The compiled search for `given` (~70 ms for a few thousand names, once per process:
    call it at start-up, off the event loop)."""
    return literal_set(tuple(sorted(word.encode() for word in given)))


def _looks_like_code(line: bytes) -> bool:
    return line.startswith(b"import ") or b'"""' in line or (
        line.startswith(b"from ") and b" import " in line)


def _capitalised(word: str, everyday: frozenset[str], keep: frozenset[str]) -> str:
    if (word in everyday or word in keep or word in _FUNCTION_WORDS
            or word.split("'", 1)[0] in everyday):
        return word
    head = word[0].upper()
    return head + word[1:] if len(head) == 1 else word
