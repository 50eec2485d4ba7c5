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


# A literal "?" is moved out of the way before encoding, so that "?" in the class map always
# means "a non-ASCII character" (a letter, most of the time: "Šárka", "Østrem").
_QUESTION_MARK = 0x1A
_CLASS_TABLE = _class_table(ord("?"))
_ASCII_CLASS_TABLE = _class_table(ord("!"))


@dataclass(frozen=True, slots=True)
class TextView:
    text: str
    raw: bytes  # ASCII; each non-ASCII character is one b"?" (a literal "?" is b"\x1a")
    lower: bytes  # raw, lower-cased: for case-insensitive keyword checks
    classes: bytes  # the class map described above
    ascii_only: bool

    def occurrences(self, *keywords: bytes) -> list[int]:
        """Sorted start offsets of every lower-case keyword, found in one pass."""
        return literal_set(keywords).starts(self.lower)


def make_view(text: str) -> TextView:
    if text.isascii():
        raw = text.encode("ascii")
        return TextView(text, raw, raw.lower(), raw.translate(_ASCII_CLASS_TABLE), True)
    # "replace" turns each non-ASCII code point into one "?", so offsets stay aligned.
    if "?" in text:
        raw = text.replace("?", chr(_QUESTION_MARK)).encode("ascii", "replace")
    else:
        raw = text.encode("ascii", "replace")
    return TextView(text, raw, raw.lower(), raw.translate(_CLASS_TABLE), False)
