"""The rollups capacity planning and unit economics read, by hand: request-seconds split over
the minutes a request spans, arrivals at its start, tokens at its end, size histograms, and
decode tokens counted only where decode time was measured."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from gateway.audit.records import event_row
from gateway.audit.rollup import bucket_tokens, rollup, token_bucket
from tests.support.audit_events import make_event

MINUTE = datetime(2026, 11, 18, 11, 6, tzinfo=UTC)
AT_11_06 = MINUTE.timestamp()


def minute(offset: int) -> datetime:
    return datetime.fromtimestamp(AT_11_06 + 60 * offset, UTC)


def test_a_request_spanning_two_minutes_is_split_between_them() -> None:
    # From 11:06:50 to 11:07:20: 10 s in the first minute, 20 s in the second.
    folded = rollup([event_row(make_event(ts_unix_s=AT_11_06 + 80, duration_s=30.0))])
    assert folded.load[("llama-8b", minute(0))] == [1, 10.0, 0]
    assert folded.load[("llama-8b", minute(1))] == [0, 20.0, 300]
    assert folded.busy == {("llama-8b", minute(0)), ("llama-8b", minute(1))}
    day = minute(0).date()
    assert folded.sizes == {(day, "llama-8b", "prompt", token_bucket(1200)): 1,
                            (day, "llama-8b", "output", token_bucket(300)): 1}


def test_decode_tokens_come_only_from_requests_that_measured_decode_time() -> None:
    streamed = make_event(ts_unix_s=AT_11_06, completion_tokens=101, ttft_s=0.5,
                          duration_s=2.5)
    whole = make_event(ts_unix_s=AT_11_06, completion_tokens=5000, ttft_s=None, stream=False)
    (entry,) = rollup([event_row(streamed), event_row(whole)]).daily.values()
    assert entry["decode_tokens"] == 100 and entry["decode_s_sum"] == 2.0
    assert entry["completion_tokens"] == 5101


@given(st.integers(1, 10**7))
def test_a_size_bucket_holds_its_size_within_ten_percent(tokens: int) -> None:
    top = bucket_tokens(token_bucket(tokens))
    assert tokens < top <= tokens * 1.1 + 1e-6


@given(st.floats(0.001, 600), st.floats(0, 59.999))
def test_request_seconds_add_up_to_the_duration(duration: float, second: float) -> None:
    end = AT_11_06 + 3600 + second
    folded = rollup([event_row(make_event(ts_unix_s=end, duration_s=duration))])
    inside = sum(v[1] for v in folded.load.values())
    assert abs(inside - duration) < 1e-6 * max(1.0, duration)
    assert sum(v[0] for v in folded.load.values()) == 1
