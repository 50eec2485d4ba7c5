"""Property tests for the stream relay's look at each upstream event: whatever an upstream
sends as an SSE data line, it is relayed or turned into an error event, never an exception
that breaks the stream, and a usage it reports is one the gateway can price and store."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.routing.streaming import StreamOutcome, _EventMeter

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["usage", "choices", "error", "prompt_tokens", "message"])
        | st.text(max_size=4), inner, max_size=3),
    max_leaves=8)
events = st.one_of(
    json_values.map(orjson.dumps),
    json_values.map(orjson.dumps).flatmap(  # cut short anywhere: a malformed event
        lambda raw: st.integers(0, len(raw)).map(lambda cut: raw[:cut])),
    st.binary(max_size=30).map(lambda junk: b'{"usage": ' + junk),
    st.binary(max_size=30).map(lambda junk: b'{"error": ' + junk),
)


@settings(max_examples=400)
@given(st.lists(events, min_size=1, max_size=5), st.booleans())
def test_any_upstream_event_is_relayed_without_an_exception(
    stream: list[bytes], include_usage: bool
) -> None:
    outcome = StreamOutcome()
    meter = _EventMeter(outcome, include_usage=include_usage, clock=lambda: 1.0)
    for event in stream:
        framed = meter(event)
        assert framed is None or isinstance(framed, bytes)
    if outcome.usage is not None:
        for count in (outcome.usage.prompt_tokens, outcome.usage.completion_tokens,
                      outcome.usage.cached_tokens):
            assert type(count) is int and 0 <= count < 2**31
