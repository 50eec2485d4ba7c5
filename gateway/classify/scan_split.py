"""Splitting one long text's sensitivity scan across worker processes, and merging it back.

Each piece is scanned with a margin of the neighbouring text on both sides, and keeps only the
findings that start inside its own share. Every detector looks at most a few hundred
characters around a candidate (a private key block a few KB), far less than the margin, so a
finding near a cut is seen whole, with the same context, by the piece that keeps it. What a
split cannot see is a surname repeated far away from the confident mention that made it a
name: that adds spans to a text already found to hold a person, never a category.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import NamedTuple

from gateway.classify.detectors.overlap import resolve
from gateway.types import SensitiveSpan

MARGIN_CHARS = 16 * 1024  # above the longest reach: a private key block of up to 12,000 chars
# Below this many characters per piece, the margins' extra scanning and the extra round trip
# cost more than the split saves.
MIN_PIECE_CHARS = 8 * MARGIN_CHARS
# Pieces are copies of the text, held until their workers finish. Above about 500K tokens
# (beyond every context window but the very largest) the text is scanned whole instead, so
# the memory a request holds stays a small multiple of its body under a flood of huge ones.
MAX_SPLIT_CHARS = 2 * 1024 * 1024
# Cut where a paragraph or a line ends, so no word (or e-mail, key, number) is cut in two.
_SEARCH_CHARS = 4096


class ScanPiece(NamedTuple):
    offset: int  # where `text` starts in the whole
    keep_from: int  # findings starting in [keep_from, keep_to), in whole-text offsets, are kept
    keep_to: int
    text: str


def split_for_scan(text: str, parts: int, margin: int = MARGIN_CHARS) -> list[ScanPiece]:
    """`parts` pieces with overlapping margins (one piece when the text is too short to gain)."""
    if not worth_splitting(text, parts):
        return [ScanPiece(0, 0, len(text), text)]
    return pieces_at(text, [_cut_near(text, len(text) * k // parts) for k in range(1, parts)],
                     margin)


def worth_splitting(text: str, parts: int) -> bool:
    return parts >= 2 and parts * MIN_PIECE_CHARS <= len(text) <= MAX_SPLIT_CHARS


def pieces_at(text: str, cuts: Sequence[int], margin: int = MARGIN_CHARS) -> list[ScanPiece]:
    """Pieces whose shares end at the given (increasing) cuts, with margins."""
    bounds = [0, *cuts, len(text)]
    pieces = []
    for keep_from, keep_to in itertools.pairwise(bounds):
        lo = max(0, keep_from - margin)
        hi = min(len(text), keep_to + margin)
        pieces.append(ScanPiece(lo, keep_from, keep_to, text[lo:hi]))
    return pieces


def _cut_near(text: str, target: int) -> int:
    for separator in ("\n\n", "\n", " "):
        at = text.rfind(separator, target - _SEARCH_CHARS, target)
        if at != -1:
            return at + len(separator)
    return target


def merge_scans(
    pieces: Sequence[ScanPiece], found: Sequence[Sequence[SensitiveSpan]]
) -> list[SensitiveSpan]:
    """The pieces' findings in whole-text offsets, each from the piece that owns its start."""
    merged: list[SensitiveSpan] = []
    for piece, spans in zip(pieces, found, strict=True):
        for span in spans:
            start = span.start + piece.offset
            if piece.keep_from <= start < piece.keep_to:
                merged.append(dataclasses.replace(
                    span, start=start, end=span.end + piece.offset))
    # Two owners' spans can still touch across a cut (a name ending where the next begins);
    # the usual overlap rule keeps one.
    return resolve(merged)
