"""Anthropic stream events → OpenAI chunks: pure, no fixtures; Hypothesis for splits and
tool-argument fragments."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.providers.sse import SSESplitter
from gateway.translate.anthropic_request import JsonMode
from gateway.translate.anthropic_stream import AnthropicStreamTranslator
from gateway.upstream import DispatchError


def sse(kind: str, **data: Any) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + \
        b"\n\n"


def stream(text: list[str], tool_pieces: list[str] | None = None, stop: str = "end_turn",
           tool_name: str = "get") -> list[bytes]:
    usage = {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 1}
    events = [sse("message_start", message={"id": "msg_9", "type": "message",
                                            "role": "assistant", "model": "claude-x",
                                            "content": [], "stop_reason": None,
                                            "stop_sequence": None, "usage": usage}),
              sse("ping"),
              sse("content_block_start", index=0, content_block={"type": "text", "text": ""})]
    events += [sse("content_block_delta", index=0, delta={"type": "text_delta", "text": t})
               for t in text]
    events.append(sse("content_block_stop", index=0))
    if tool_pieces is not None:
        events.append(sse("content_block_start", index=1, content_block={
            "type": "tool_use", "id": "toolu_1", "name": tool_name, "input": {}}))
        events += [sse("content_block_delta", index=1,
                       delta={"type": "input_json_delta", "partial_json": p})
                   for p in tool_pieces]
        events.append(sse("content_block_stop", index=1))
    events.append(sse("message_delta", delta={"stop_reason": stop, "stop_sequence": None},
                      usage={"output_tokens": 12}))
    events.append(sse("message_stop"))
    return events


def translate(raw: bytes, cuts: list[int], json_mode: JsonMode | None = None) -> list[bytes]:
    translator = AnthropicStreamTranslator(json_mode, 1700000000, "claude")
    splitter = SSESplitter()
    out: list[bytes] = []
    bounds = [0, *sorted(cuts), len(raw)]
    for start, end in itertools.pairwise(bounds):
        for data in splitter.feed(raw[start:end]):
            out.extend(translator.feed(data))
    for data in splitter.flush():
        out.extend(translator.feed(data))
    out.extend(translator.finish())
    return out


def chunks(raw: bytes, json_mode: JsonMode | None = None) -> list[dict[str, Any]]:
    return [orjson.loads(c) for c in translate(raw, [], json_mode)]


def test_text_stream_in_openai_order():
    out = chunks(b"".join(stream(["Hel", "lo"])))
    assert all(c["id"] == "chatcmpl-msg_9" and c["object"] == "chat.completion.chunk"
               and c["model"] == "claude-x" and c["created"] == 1700000000 for c in out)
    deltas = [c["choices"][0]["delta"] for c in out if c["choices"]]
    assert deltas == [{"role": "assistant", "content": ""}, {"content": "Hel"},
                      {"content": "lo"}, {}]
    assert out[-2]["choices"][0]["finish_reason"] == "stop"
    assert out[-1]["choices"] == []
    assert out[-1]["usage"] == {"prompt_tokens": 14, "completion_tokens": 12,
                                "total_tokens": 26, "prompt_tokens_details": {
                                    "cached_tokens": 4, "cache_write_tokens": 0}}


def test_tool_use_streams_as_tool_call_fragments():
    out = chunks(b"".join(stream([], ["", '{"ci', 'ty": "Oslo"}'], stop="tool_use")))
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in out
             if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    assert calls[0] == {"index": 0, "id": "toolu_1", "type": "function",
                        "function": {"name": "get", "arguments": ""}}
    assert [c["function"]["arguments"] for c in calls[1:]] == ['{"ci', 'ty": "Oslo"}']
    assert all(set(c) == {"index", "function"} for c in calls[1:])
    assert out[-2]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("wrapped", [False, True])
def test_the_forced_answer_tool_streams_as_content(wrapped: bool):
    pieces = ['{"value"', ': [1, 2]}'] if wrapped else ['{"a"', ": 1}"]
    raw = b"".join(stream([], pieces, stop="tool_use", tool_name="json_response"))
    out = chunks(raw, JsonMode("json_response", wrapped))
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in out if c["choices"])
    assert orjson.loads(content) == ([1, 2] if wrapped else {"a": 1})
    assert out[-2]["choices"][0]["finish_reason"] == "stop"


@given(st.data())
def test_any_split_of_the_byte_stream_gives_the_same_chunks(data: st.DataObject):
    raw = b"".join(stream(["Hel", "lo, ", "wörld"], ["", '{"a": ', "[1, 2]}"], stop="tool_use"))
    cuts = data.draw(st.lists(st.integers(0, len(raw)), max_size=12))
    assert translate(raw, cuts) == translate(raw, [])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4), st.data())
def test_tool_argument_fragments_concatenate_to_the_same_json(tool_input: dict[str, Any],
                                                              data: st.DataObject):
    text = orjson.dumps(tool_input).decode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    out = chunks(b"".join(stream([], pieces, stop="tool_use")))
    arguments = "".join(
        c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
        for c in out if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    assert orjson.loads(arguments) == tool_input


def test_an_error_before_message_start_fails_over_and_after_it_is_an_error_payload():
    translator = AnthropicStreamTranslator(None, 1, "claude")
    events = stream(["x"])
    error = orjson.dumps({"type": "error", "error": {"type": "overloaded_error",
                                                     "message": "Overloaded"}})
    assert not translator.ready
    with pytest.raises(DispatchError) as info:
        translator.feed(error)
    assert info.value.retryable and info.value.error.code == "overloaded_error"
    translator.feed(events[0].split(b"data: ")[1].strip())
    assert translator.ready  # committed at message_start, like an OpenAI stream's role chunk
    payload = orjson.loads(translator.feed(error)[0])
    assert set(payload["error"]) == {"message", "type", "param", "code"}
    assert payload["error"]["code"] == "overloaded"


def test_a_stream_cut_before_message_stop_is_an_error():
    raw = b"".join(stream(["x"])[:-1])
    with pytest.raises(DispatchError) as info:
        translate(raw, [])
    assert not info.value.retryable and "message_stop" in info.value.error.message


def test_pings_thinking_and_unknown_events():
    translator = AnthropicStreamTranslator(None, 1, "claude")
    assert translator.feed(b'{"type":"ping"}') == []
    assert translator.feed(b'{"type":"some_future_event"}') == []
    translator.feed(b'{"type":"content_block_start","index":0,"content_block":'
                    b'{"type":"thinking","thinking":""}}')
    out = translator.feed(b'{"type":"content_block_delta","index":0,"delta":'
                          b'{"type":"thinking_delta","thinking":"hmm"}}')
    assert orjson.loads(out[0])["choices"][0]["delta"] == {"reasoning_content": "hmm"}
    signed = translator.feed(b'{"type":"content_block_delta","index":0,"delta":'
                             b'{"type":"signature_delta","signature":"s"}}')
    # The signature rides along for Claude clients, who must hand the block back.
    assert orjson.loads(signed[0])["choices"][0]["delta"] == {
        "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "s"}]}
