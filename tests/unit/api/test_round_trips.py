"""Property tests across both translation directions: what goes OpenAI → Anthropic → OpenAI (or
Anthropic → OpenAI → Anthropic, plain or streamed) comes back meaning the same."""

from __future__ import annotations

import itertools
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.translate.anthropic_reply import to_chat_completion
from gateway.translate.anthropic_request import to_messages_request
from gateway.translate.anthropic_stream import AnthropicStreamTranslator
from gateway.translate.messages_reply import to_anthropic_message
from gateway.translate.messages_request import to_chat_payload
from gateway.translate.messages_stream import AnthropicEventEncoder
from gateway.types import Backend

CLAUDE = Backend("claude", "anthropic", "http://x/v1", "claude-x", "external", 200_000, 4)
texts = st.text(min_size=1, max_size=20).filter(str.strip)
names = st.sampled_from(["get_weather", "search", "add"])
scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10)
arguments = st.dictionaries(st.text(min_size=1, max_size=6), scalars | st.lists(scalars,
                                                                                 max_size=3),
                            max_size=4)


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])),
                         "content": draw(texts)})
    messages.append({"role": "user", "content": draw(texts)})
    for turn in range(draw(st.integers(0, 3))):
        calls = [{"id": f"call_{turn}_{i}", "type": "function",
                  "function": {"name": draw(names),
                               "arguments": orjson.dumps(draw(arguments)).decode()}}
                 for i in range(draw(st.integers(1, 3)))]
        messages.append({"role": "assistant", "content": draw(st.none() | texts),
                         "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": draw(texts)}
                     for c in calls]
        messages.append({"role": "user", "content": draw(texts)})
    return messages


def meaning(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    out = []
    for m in messages:
        role = "system" if m["role"] == "developer" else m["role"]
        calls = tuple((c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"]))
                      for c in m.get("tool_calls") or ())
        out.append((role, m.get("content"), calls, m.get("tool_call_id")))
    return out


@given(conversations())
def test_a_tool_conversation_survives_openai_to_anthropic_and_back(messages: list[Any]):
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
             for n in ("get_weather", "search", "add")]
    anthropic = to_messages_request({"model": "m", "messages": messages, "tools": tools,
                                     "max_tokens": 50}, CLAUDE, stream=False).body
    roles = [t["role"] for t in anthropic["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # strictly alternating
    back = to_chat_payload({**anthropic, "model": "m"})
    assert meaning(back["messages"]) == meaning(messages)
    assert [t["function"]["name"] for t in back["tools"]] == ["get_weather", "search", "add"]


@st.composite
def anthropic_messages(draw: st.DrawFn) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    if draw(st.booleans()):
        blocks.append({"type": "text", "text": draw(texts)})
    calls = draw(st.integers(0, 3))
    blocks += [{"type": "tool_use", "id": f"toolu_{i}", "name": draw(names),
                "input": draw(arguments)} for i in range(calls)]
    if not blocks:
        blocks.append({"type": "text", "text": draw(texts)})
    stop = "tool_use" if calls else draw(st.sampled_from(["end_turn", "max_tokens",
                                                          "stop_sequence"]))
    usage = {"input_tokens": draw(st.integers(0, 5000)),
             "output_tokens": draw(st.integers(1, 5000)),
             "cache_read_input_tokens": draw(st.integers(0, 5000)),
             "cache_creation_input_tokens": draw(st.integers(0, 5000))}
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "auto",
            "content": blocks, "stop_reason": stop,
            "stop_sequence": "END" if stop == "stop_sequence" else None, "usage": usage}


@given(anthropic_messages())
def test_an_anthropic_reply_survives_the_openai_shape(message: dict[str, Any]):
    body, _ = to_chat_completion(message, None, 1)
    assert to_anthropic_message(orjson.loads(body), "auto") == message


def stream_of(message: dict[str, Any]) -> list[bytes]:
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start},
                                    {"type": "ping"}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": i,
                        "delta": {"type": "text_delta", "text": ch}} for ch in block["text"]]
        else:
            events.append({"type": "content_block_start", "index": i,
                           "content_block": {**block, "input": {}}})
            raw = orjson.dumps(block["input"]).decode()
            events += [{"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": raw[j:j + 5]}}
                for j in range(0, len(raw), 5)]
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {
        "stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]},
        "usage": {"output_tokens": message["usage"]["output_tokens"]}})
    events.append({"type": "message_stop"})
    return [orjson.dumps(e) for e in events]


def accumulate(frames: bytes) -> dict[str, Any]:
    """What an Anthropic SDK builds from the events (its MessageStream accumulator, in short)."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for frame in frames.split(b"\n\n")[:-1]:
        event = orjson.loads(frame.split(b"\ndata: ")[1])
        kind = event["type"]
        if kind == "message_start":
            message = event["message"]
        elif kind == "content_block_start":
            message["content"].append(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif kind == "content_block_stop" and event["index"] in partial:
            message["content"][event["index"]]["input"] = orjson.loads(partial[event["index"]])
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"].update(event["usage"])
    return message


@settings(max_examples=50)
@given(anthropic_messages())
def test_an_anthropic_stream_survives_openai_chunks(message: dict[str, Any]):
    translator = AnthropicStreamTranslator(None, 1, "claude")
    chunks = [c for event in stream_of(message) for c in translator.feed(event)]
    encoder = AnthropicEventEncoder("auto", "msg_unused")
    frames = b"".join(b"".join(encoder.feed(orjson.loads(c))) for c in chunks)
    frames += b"".join(encoder.end())
    rebuilt = accumulate(frames)
    assert rebuilt["content"] == message["content"]
    assert rebuilt["stop_reason"] == message["stop_reason"]
    assert rebuilt["stop_sequence"] == message["stop_sequence"]
    assert rebuilt["usage"] == message["usage"] and rebuilt["id"] == "msg_01"
