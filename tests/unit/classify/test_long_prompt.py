"""A long prompt's scan and exact count shared out to workers, one task each: the same spans
and the same count as doing it all in one place."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gateway.classify.long_prompt import locate, plan_shared
from gateway.classify.profiler import RequestClassifier
from gateway.classify.scan_split import MAX_SPLIT_CHARS, MIN_PIECE_CHARS
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter, count_text
from gateway.classify.workers import scan_and_count, scan_in_worker
from gateway.types import Endpoint, RouteRequest

PARAGRAPH = ("Quarterly notes: throughput held at 40 requests a second, and the queue stayed "
             "short.\nContact dana.wells@gmail.com or call +44 20 7946 0958 if it grows.\n")


def long_text(chars: int) -> str:
    return PARAGRAPH * (chars // len(PARAGRAPH) + 1)


def test_shares_are_exact_splits_of_the_counted_string_inside_pieces() -> None:
    counted = long_text(3 * MIN_PIECE_CHARS)
    text = counted + "\n\nsome other field"
    jobs = plan_shared(text, counted, 2)
    assert jobs is not None and len(jobs) == 2
    shares = [j.piece.text[j.count_from:j.count_to] for j in jobs]
    assert "".join(shares) == counted
    assert sum(count_text(s) for s in shares) == count_text(counted)
    assert jobs[0].piece.keep_to == jobs[1].piece.keep_from == len(shares[0])


def test_no_shared_plan_where_it_would_not_pay() -> None:
    big = long_text(3 * MIN_PIECE_CHARS)
    assert plan_shared(big[:1000], big[:1000], 2) is None  # too short to split
    assert plan_shared(big + big, big, 2) is None  # the counted string is half the text
    one_line = "x" * (3 * MIN_PIECE_CHARS)
    assert plan_shared(one_line, one_line, 2) is None  # no exact split point
    assert plan_shared(big, big, 1) is None
    huge = long_text(MAX_SPLIT_CHARS + 1)
    assert plan_shared(huge, huge, 2) is None  # scanned whole: pieces would be copies


class RecordingPool(ThreadPoolExecutor):
    def __init__(self) -> None:
        super().__init__(2)
        self.calls: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.calls.append(fn.__name__)
        return super().submit(fn, *args, **kwargs)


async def profile_both_ways(payload: dict[str, Any]) -> tuple[Any, Any, list[str]]:
    request = RouteRequest("t", Endpoint.CHAT, "m", payload)
    inline = await RequestClassifier(TokenCounter(), None, SensitivityScanner()).profile(
        request, [0])
    with RecordingPool() as pool:
        shared = await RequestClassifier(
            TokenCounter(), None, SensitivityScanner(), pool, parallelism=2
        ).profile(request, [0])
    return inline, shared, pool.calls


async def test_one_long_message_goes_out_as_one_task_per_worker() -> None:
    payload = {"messages": [{"role": "system", "content": "Be brief."},
                            {"role": "user", "content": long_text(4 * MIN_PIECE_CHARS)}]}
    inline, shared, calls = await profile_both_ways(payload)
    assert calls == [scan_and_count.__name__] * 2
    assert shared.prompt_tokens == inline.prompt_tokens and shared.prompt_tokens_exact
    assert shared.spans == inline.spans and len(shared.spans) > 100


async def test_two_long_messages_fall_back_to_separate_scan_and_count_tasks() -> None:
    half = long_text(2 * MIN_PIECE_CHARS)
    payload = {"messages": [{"role": "user", "content": half},
                            {"role": "assistant", "content": half.upper()}]}
    inline, shared, calls = await profile_both_ways(payload)
    assert scan_and_count.__name__ not in calls
    assert calls.count(scan_in_worker.__name__) == 2
    assert shared.prompt_tokens == inline.prompt_tokens and shared.prompt_tokens_exact
    assert shared.spans == inline.spans


@given(st.text(alphabet="ab\n", max_size=300), st.text(alphabet="ab\n", min_size=1, max_size=200))
def test_locate_is_find(text: str, part: str) -> None:
    # Heads that repeat ("aaaa…") make the first hit of the head the wrong one.
    assert locate(text, part) == text.find(part)
    assert locate(text + part, part) == (text + part).find(part)
