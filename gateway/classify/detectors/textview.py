"""Prepared views of one text, built once per scan, that every detector shares.

Python's regex engine walks a character class at ~6 ns per character but finds a literal at
~0.5 ns, so detectors search a one-byte-per-character *class map* (digits → '0', upper-case
ASCII → 'A', lower-case ASCII → 'a', anything non-ASCII → '?', punctuation kept) with
literal-led patterns. Every view has exactly the offsets of the original text.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from gateway.classify.detectors.literals import literal_set


def _class_table(question_mark: int) -> bytes:
    table = bytearray(range(256))
    for ch in string.digits:
        table[ord(ch)] = ord("0")
    for ch in string.ascii_uppercase:
        table[ord(ch)] = ord("A")
    for ch in string.ascii_lowercase:
        table[ord(ch)] = ord("a")
    table[ord("?")] = question_mark
    table[_QUESTION_MARK] = ord("!")
    return bytes(table)


# Up to this many bytes of text times keywords, `bytes.find` per keyword beats one Hyperscan
# pass (its call, scratch and match callbacks cost ~2 µs before the first byte).
FIND_BUDGET = 2048

# A literal "?" is moved out of the way before encoding, so that "?" in the class map always
# means "a non-ASCII character" (a letter, most of the time: "Šárka", "Østrem").
_QUESTION_MARK = 0x1A
_CLASS_TABLE = _class_table(ord("?"))
_APOSTROPHES = ("\u2019", "\u2018")
_ASCII_CLASS_TABLE = _class_table(ord("!"))


@dataclass(frozen=True, slots=True)
class TextView:
    text: str
    raw: bytes  # ASCII; each non-ASCII character is one b"?" (a literal "?" is b"\x1a")
    lower: bytes  # raw, lower-cased: for case-insensitive keyword checks
    classes: bytes  # the class map described above
    ascii_only: bool

    def occurrences(self, *keywords: bytes) -> list[int]:
        """Sorted start offsets of every lower-case keyword, overlaps included: found in one
        compiled pass, or on a short text by `bytes.find`, which finishes there before a
        Hyperscan call has set up (most prompts are a few hundred characters)."""
        lower = self.lower
        if len(lower) * len(keywords) > FIND_BUDGET:
            return literal_set(keywords).starts(lower)
        found: list[int] = []
        for keyword in keywords:
            at = lower.find(keyword)
            while at >= 0:
                found.append(at)
                at = lower.find(keyword, at + 1)
        if len(keywords) > 1:
            found.sort()
        return found


def make_view(text: str) -> TextView:
    if text.isascii():
        raw = text.encode("ascii")
        return TextView(text, raw, raw.lower(), raw.translate(_ASCII_CLASS_TABLE), True)
    # "replace" turns each non-ASCII code point into one "?", so offsets stay aligned.
    ascii_text = text.replace("?", chr(_QUESTION_MARK)) if "?" in text else text
    # A typographic apostrophe is an apostrophe to every detector ("Sarah’s", "d’Émile"),
    # not a letter of the word it ends: one character for one, so offsets stay aligned.
    for curly in _APOSTROPHES:
        if curly in ascii_text:
            ascii_text = ascii_text.replace(curly, "'")
    raw = ascii_text.encode("ascii", "replace")
    return TextView(text, raw, raw.lower(), raw.translate(_CLASS_TABLE), False)
