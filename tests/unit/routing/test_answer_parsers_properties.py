"""Property tests for the parsers that read an upstream's answer after the fact: restoring
redacted values into it (whole and streamed), the text kept for the audit record, and the
error bodies of OpenAI-compatible, Azure and Anthropic upstreams. Whatever an upstream
sends, none of them raises; what they can restore, they restore exactly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.classify.redaction import RedactionMap
from gateway.errors import GatewayError
from gateway.providers.anthropic_errors import anthropic_error
from gateway.providers.azure import azure_error
from gateway.providers.upstream_errors import normalise_upstream_error
from gateway.routing.content_capture import _answer_text, _streamed_text
from gateway.routing.redaction_relay import RestoringStream, restore_body

KEYS = ["choices", "message", "content", "text", "delta", "tool_calls", "function",
        "arguments", "index", "finish_reason", "error", "code", "type", "innererror",
        "content_filter_result", "filtered", "param"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=8) | st.just("[EMAIL_1]"),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=4),
    max_leaves=12)
# Answer-shaped: the keys a parser looks for, each holding any JSON value (a list where an
# object belongs, a number where a list belongs, ...), nested the way answers nest.
shaped_level = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=4)
answers = st.fixed_dictionaries({}, optional={
    "choices": json_values | st.lists(st.dictionaries(
        st.sampled_from(KEYS), json_values | shaped_level | st.lists(shaped_level, max_size=2),
        max_size=5), max_size=2),
    "error": json_values | shaped_level,
})
bodies = st.one_of(
    answers.map(orjson.dumps),
    json_values.map(orjson.dumps),
    json_values.map(orjson.dumps).flatmap(
        lambda raw: st.integers(0, len(raw)).map(lambda cut: raw[:cut])),
    st.binary(max_size=40),
)


def mapping() -> RedactionMap:
    found = RedactionMap()
    assert found.placeholder_for("EMAIL", "ada@corp.io") == "[EMAIL_1]"
    return found


@settings(max_examples=400)
@given(bodies)
def test_restoring_any_answer_body_never_raises(body: bytes) -> None:
    assert isinstance(restore_body(body, mapping()), bytes)


@settings(max_examples=200)
@given(st.text(max_size=30), st.text(max_size=30))
def test_a_placeholder_in_message_content_is_restored_exactly(before: str, after: str) -> None:
    body = orjson.dumps({"choices": [{"index": 0, "message": {
        "role": "assistant", "content": f"{before}[EMAIL_1]{after}"}}]})
    restored = orjson.loads(restore_body(body, mapping()))
    assert restored["choices"][0]["message"]["content"] == f"{before}ada@corp.io{after}"


class Replay:
    """An upstream stream replaying fixed events."""

    def __init__(self, events: list[bytes]) -> None:
        self.first, self._rest = events[0], events[1:]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self._rest:
            yield event

    async def aclose(self) -> None:
        return None


def relay(events: list[bytes]) -> list[bytes]:
    async def run() -> list[bytes]:
        stream = RestoringStream(Replay(events), mapping())
        return [stream.first] + [event async for event in stream]

    return asyncio.run(run())


@settings(max_examples=300)
@given(st.lists(bodies, min_size=1, max_size=4))
@example([orjson.dumps({"choices": [{"index": [1], "delta": {"content": "[EMA"}}]})])
@example([orjson.dumps({"choices": [{"index": 0, "delta": {"content": True},
                                     "finish_reason": "stop"}]})])
def test_restoring_any_stream_never_raises(events: list[bytes]) -> None:
    assert all(isinstance(e, bytes) for e in relay(events))


@settings(max_examples=200)
@given(st.integers(0, 9), st.text(alphabet="ab ", max_size=6))
def test_a_placeholder_split_across_stream_events_is_restored(cut: int, tail: str) -> None:
    text = "[EMAIL_1]" + tail
    pieces = [text[:cut], text[cut:]]

    def event(piece: str, done: bool) -> bytes:
        return orjson.dumps({"choices": [{"index": 0, "delta": {"content": piece},
                                          "finish_reason": "stop" if done else None}]})

    out = relay([event(pieces[0], False), event(pieces[1], True)])
    streamed = "".join(orjson.loads(e)["choices"][0]["delta"].get("content") or "" for e in out)
    assert streamed == "ada@corp.io" + tail


@settings(max_examples=300)
@given(bodies, st.lists(bodies, max_size=4))
def test_the_audited_answer_text_of_anything_is_a_string(body: bytes, events: list[bytes]) -> None:
    assert isinstance(_answer_text(body), str)
    assert isinstance(_streamed_text(events), str)


@settings(max_examples=400)
@given(st.integers(400, 599), bodies)
def test_any_upstream_error_body_becomes_a_gateway_error(status: int, body: bytes) -> None:
    for parse in (normalise_upstream_error, azure_error, anthropic_error):
        err, retryable = parse(status, body, "backend-a")
        assert isinstance(err, GatewayError) and isinstance(retryable, bool)
        assert 400 <= err.status <= 599
        assert isinstance(err.message, str) and err.message
        assert err.code is None or isinstance(err.code, str)
        assert err.param is None or isinstance(err.param, str)
