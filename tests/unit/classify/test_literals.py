"""One-pass keyword search: the same offsets as a find loop per keyword, from any thread."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.detectors.literals import literal_set
from gateway.classify.detectors.textview import FIND_BUDGET, make_view


def find_all(haystack: bytes, keywords: tuple[bytes, ...]) -> list[int]:
    found = []
    for keyword in keywords:
        at = haystack.find(keyword)
        while at != -1:
            found.append(at)
            at = haystack.find(keyword, at + 1)
    return sorted(found)


KEYWORD = st.binary(min_size=1, max_size=4).filter(lambda k: b"\n" not in k) | st.sampled_from(
    [b"my ", b"-u", b"name is ", b"a.b", b"(x)", b"\\", b"$", b"aa"])


@settings(max_examples=300, deadline=None)
@given(haystack=st.binary(max_size=300) | st.text("ab my-u.()$\\", max_size=300).map(str.encode),
       keywords=st.lists(KEYWORD, min_size=1, max_size=5, unique=True).map(tuple))
def test_same_offsets_as_a_find_loop(haystack: bytes, keywords: tuple[bytes, ...]) -> None:
    assert literal_set(keywords).starts(haystack) == find_all(haystack, keywords)


def test_overlapping_and_repeated_occurrences_are_all_found() -> None:
    assert literal_set((b"aa",)).starts(b"aaaa") == [0, 1, 2]
    assert literal_set((b"my ", b"y ")).starts(b"my my ") == [0, 1, 3, 4]
    assert literal_set((b"x",)).starts(b"") == []


def test_scans_from_many_threads_at_once_stay_correct() -> None:
    keywords = (b"patient", b"policy", b"my ")
    text = (b"the policy says my patient " * 2000) + b"tail"
    expected = find_all(text, keywords)

    def scan(_: int) -> bool:
        return all(literal_set(keywords).starts(text) == expected for _ in range(20))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(scan, range(8)))


def test_an_empty_keyword_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        literal_set((b"a", b""))


@settings(max_examples=200, deadline=None)
@given(text=st.text("ab my-u.()$\\N", max_size=1200),
       keywords=st.lists(KEYWORD, min_size=1, max_size=5, unique=True).map(tuple))
def test_a_view_finds_the_same_offsets_on_short_and_long_texts(
    text: str, keywords: tuple[bytes, ...]
) -> None:
    # Short texts take bytes.find, long ones Hyperscan: the offsets must not depend on which.
    view = make_view(text)
    assert view.occurrences(*keywords) == literal_set(keywords).starts(view.lower)


def test_both_sides_of_the_find_budget_are_exercised() -> None:
    short, long = make_view("my " * 10), make_view("my " * (FIND_BUDGET // 2))
    assert len(short.lower) <= FIND_BUDGET < len(long.lower)
    assert short.occurrences(b"my ", b"y ") == literal_set((b"my ", b"y ")).starts(short.lower)
    assert long.occurrences(b"my ") == list(range(0, len(long.lower), 3))


WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")


@settings(max_examples=300, deadline=None)
@given(haystack=st.text("ab0 -\n.é", max_size=200).map(str.encode),
       keywords=st.lists(st.text("abé", min_size=1, max_size=3).map(str.encode),
                         min_size=1, max_size=4, unique=True).map(tuple))
def test_bounded_keeps_exactly_the_occurrences_no_word_byte_touches(
        haystack: bytes, keywords: tuple[bytes, ...]) -> None:
    lengths = {k: len(k) for k in keywords}
    expected = sorted(
        at for k in keywords for at in find_all(haystack, (k,))
        if (at == 0 or haystack[at - 1] not in WORD_BYTES)
        and (at + lengths[k] == len(haystack) or haystack[at + lengths[k]] not in WORD_BYTES)
    )
    assert sorted(literal_set(keywords).bounded(haystack, WORD_BYTES)) == expected
