"""A long scan split across workers finds what one scan finds, cuts and margins included."""

from __future__ import annotations

import base64
import itertools
import random
from concurrent.futures import ThreadPoolExecutor

from gateway.classify.profiler import RequestClassifier
from gateway.classify.scan_split import (
    MARGIN_CHARS,
    MAX_SPLIT_CHARS,
    merge_scans,
    split_for_scan,
)
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.types import Endpoint, RouteRequest

SCANNER = SensitivityScanner()
FILLER = ("The quarterly review covers throughput, queue depth and the cost of each route. "
          "Nothing in this paragraph names anyone or holds an identifier.\n")
PLANTED = (
    "Write to dana.wells@gmail.com about it.",
    "Card 4539 1488 0343 6467 was charged twice.",
    "Patient Marta Kowalczyk, MRN 00483920, was seen on Monday.",
    "Our office: 1634 Rua do Arenque, Lisbon.",
    "The build token is ghp_R2vX8fTq1LmZ7cW9bN3kD5sJ0yH4uE6pA1oQ.",
)


def private_key() -> str:
    body = base64.b64encode(random.Random(5).randbytes(1200)).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----\n"


def long_text(planted_near: list[int]) -> str:
    """Filler with each planted line (and a private key) set right across a given offset."""
    text = FILLER * (400_000 // len(FILLER))
    for at, line in zip(planted_near, (*PLANTED, private_key()), strict=False):
        at = max(0, at - len(line) // 2)
        text = text[:at] + line + text[at + len(line):]
    return text


def split_scan(
    text: str, parts: int, margin: int = MARGIN_CHARS
) -> list[tuple[str, int, int]]:
    pieces = split_for_scan(text, parts, margin)
    found = merge_scans(pieces, [SCANNER.scan_for_redaction(p.text) for p in pieces])
    return [(s.type, s.start, s.end) for s in found]


def whole_scan(text: str) -> list[tuple[str, int, int]]:
    return [(s.type, s.start, s.end) for s in SCANNER.scan_for_redaction(text)]


def test_short_texts_and_huge_ones_are_one_piece() -> None:
    assert split_for_scan("hello", 2) == [(0, 0, 5, "hello")]
    assert len(split_for_scan(FILLER * 100, 2)) == 1
    # Past every context window but the largest: scanned whole, not copied into pieces.
    huge = FILLER * (MAX_SPLIT_CHARS // len(FILLER) + 1)
    assert split_for_scan(huge, 2) == [(0, 0, len(huge), huge)]
    assert split_for_scan(huge, 2)[0].text is huge


def test_pieces_cover_the_text_once_with_margins_on_both_sides() -> None:
    text = long_text([])
    pieces = split_for_scan(text, 3)
    assert len(pieces) == 3
    assert pieces[0].keep_from == 0 and pieces[-1].keep_to == len(text)
    for left, right in itertools.pairwise(pieces):
        assert left.keep_to == right.keep_from
        assert text[right.keep_from - 1] == "\n"  # cut where a line ends
        assert left.offset + len(left.text) - left.keep_to == MARGIN_CHARS
        assert right.keep_from - right.offset == MARGIN_CHARS
    assert all(text[p.offset:p.offset + len(p.text)] == p.text for p in pieces)


def test_findings_across_every_cut_match_a_single_scan() -> None:
    cut = split_for_scan(long_text([]), 2)[1].keep_from
    # Each planted line in turn right across the cut or just inside either margin, the
    # others far from it.
    for offset in (cut, cut - MARGIN_CHARS + 40, cut + MARGIN_CHARS - 40):
        for index in range(len(PLANTED) + 1):
            near = [10_000 * (k + 1) for k in range(len(PLANTED) + 1)]
            near[index] = offset
            text = long_text(near)
            expected = whole_scan(text)
            assert len({f[0] for f in expected}) >= 6, "every planted kind is found at all"
            assert split_scan(text, 2) == expected


def test_a_private_key_across_a_cut_is_one_finding() -> None:
    text = long_text([])
    cut = split_for_scan(text, 2)[1].keep_from
    text = long_text([10_000, 20_000, 30_000, 40_000, 50_000, cut])
    cut = split_for_scan(text, 2)[1].keep_from  # now at one of the key's line ends
    keys = [f for f in split_scan(text, 2) if f[0] == "secret.private_key"]
    assert len(keys) == 1 and keys[0][1] < cut < keys[0][2]
    assert split_scan(text, 2) == whole_scan(text)
    # Without margins the cut would break the block (which is why they are there).
    assert split_scan(text, 2, margin=0) != whole_scan(text)


async def test_the_classifier_splits_a_long_scan_and_finds_the_same() -> None:
    text = long_text([200_000 - 8, 5_000, 7_000, 9_000, 11_000, 13_000])
    request = RouteRequest("t", Endpoint.CHAT, "m", {"messages": [
        {"role": "user", "content": text}]})
    with ThreadPoolExecutor(2) as pool:
        submitted: list[int] = []
        original = pool.submit

        def counting_submit(fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(len(args[0]) if args and isinstance(args[0], str) else 0)
            return original(fn, *args, **kwargs)

        pool.submit = counting_submit  # type: ignore[method-assign]
        split = RequestClassifier(TokenCounter(), None, SCANNER, pool, parallelism=2)
        profile = await split.profile(request)
    inline = await RequestClassifier(TokenCounter(), None, SCANNER).profile(request)
    assert [n for n in submitted if n] and all(n < len(text) for n in submitted if n)
    assert profile.spans == inline.spans and profile.sensitivity == inline.sensitivity
    assert {"pii", "phi", "secret"} <= set(profile.sensitivity)
