"""The /v1/messages front door's translations: pure, no fixtures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.errors import InvalidRequest, ModelNotFound, QuotaExceeded, UpstreamFailed
from gateway.translate.messages_reply import (
    anthropic_usage,
    error_body,
    stop_reason,
    to_anthropic_message,
)
from gateway.translate.messages_request import to_chat_payload
from gateway.translate.messages_stream import AnthropicEventEncoder

HELLO = [{"role": "user", "content": "hi"}]


def payload(**body: Any) -> dict[str, Any]:
    return to_chat_payload({"model": "auto", "max_tokens": 10, "messages": HELLO, **body})


def test_request_fields():
    out = payload(system=[{"type": "text", "text": "a"}], stop_sequences=["END"], top_k=5,
                  temperature=0.5, metadata={"user_id": "u1"}, stream=True,
                  thinking={"type": "enabled", "budget_tokens": 2000},
                  output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}})
    assert out == {
        "model": "auto", "max_tokens": 10, "stop": ["END"], "top_k": 5, "temperature": 0.5,
        "user": "u1", "stream": True, "stream_options": {"include_usage": True},
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "messages": [{"role": "system", "content": "a"}, *HELLO],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "output", "schema": {"type": "object"}}}}


def test_blocks_tools_and_results():
    turns = [
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "AA"}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "tu", "name": "f", "input": {"a": 1}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu",
             "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}]},
            {"type": "text", "text": "next"}]},
    ]
    out = payload(messages=turns, tools=[{"name": "f", "input_schema": {"type": "object"}}],
                  tool_choice={"type": "any", "disable_parallel_tool_use": True})
    assert out["messages"] == [
        {"role": "user", "content": [
            {"type": "text", "text": "see"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
        {"role": "assistant", "content": "ok", "tool_calls": [
            {"id": "tu", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}]},
        {"role": "tool", "tool_call_id": "tu", "content": "r1\nr2"},
        {"role": "user", "content": "next"}]
    assert out["tools"] == [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object"}}}]
    assert out["tool_choice"] == "required" and out["parallel_tool_calls"] is False


@pytest.mark.parametrize("body,param", [
    ({"max_tokens": None}, "max_tokens"),
    ({"model": ""}, "model"),
    ({"messages": []}, "messages"),
    ({"frobnicate": 1}, "frobnicate"),
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools.0"),
    ({"messages": [{"role": "system", "content": "x"}]}, "messages.0"),
    ({"tool_choice": {"type": "magic"}, "tools": [{"name": "f"}]}, "tool_choice"),
])
def test_bad_requests_name_the_field(body: dict[str, Any], param: str):
    with pytest.raises(InvalidRequest) as info:
        payload(**body)
    assert info.value.param == param


def completion(message: dict[str, Any], finish: str = "stop", **choice: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-abc", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": finish, **choice}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35,
                  "prompt_tokens_details": {"cached_tokens": 20}}}


def test_reply_with_text_tool_calls_and_usage():
    message = to_anthropic_message(completion({
        "role": "assistant", "content": "Let me see.", "reasoning_content": "think",
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "f", "arguments": '{"x": 1}'}},
                       {"id": "c2", "type": "function",
                        "function": {"name": "g", "arguments": "{broken"}}]}, "tool_calls"),
        "auto")
    assert message["id"] == "msg_abc" and message["model"] == "auto"
    assert message["content"] == [
        {"type": "thinking", "thinking": "think", "signature": ""},
        {"type": "text", "text": "Let me see."},
        {"type": "tool_use", "id": "toolu_c1", "name": "f", "input": {"x": 1}},
        {"type": "tool_use", "id": "toolu_c2", "name": "g",
         "input": {"_unparsed_arguments": "{broken"}}]
    assert message["stop_reason"] == "tool_use" and message["stop_sequence"] is None
    assert message["usage"] == {"input_tokens": 10, "output_tokens": 5,
                                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 20}


@pytest.mark.parametrize("finish,matched,expected", [
    ("stop", None, ("end_turn", None)), ("stop", "END", ("stop_sequence", "END")),
    ("stop", 128001, ("end_turn", None)), ("length", None, ("max_tokens", None)),
    ("tool_calls", None, ("tool_use", None)), ("content_filter", None, ("refusal", None)),
    (None, None, ("end_turn", None)),
])
def test_stop_reasons(finish: str | None, matched: Any, expected: tuple[str, str | None]):
    assert stop_reason(finish, matched) == expected


def test_usage_never_goes_negative():
    assert anthropic_usage({"prompt_tokens": 3, "prompt_tokens_details": {
        "cached_tokens": 5}})["input_tokens"] == 0


@pytest.mark.parametrize("error,status,kind", [
    (InvalidRequest("x"), 400, "invalid_request_error"),
    (ModelNotFound("x"), 404, "not_found_error"),
    (QuotaExceeded("x"), 429, "rate_limit_error"),
    (UpstreamFailed("x"), 502, "api_error"),
])
def test_error_shape(error: Exception, status: int, kind: str):
    body = orjson.loads(error_body(error, "req_1"))  # type: ignore[arg-type]
    assert body == {"type": "error", "error": {"type": kind, "message": "x"},
                    "request_id": "req_1"}
    assert error.status == status  # type: ignore[attr-defined]


def events(frames: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for frame in b"".join(frames).split(b"\n\n")[:-1]:
        name, data = frame.split(b"\n")
        parsed = orjson.loads(data.removeprefix(b"data: "))
        assert name == b"event: " + parsed["type"].encode()
        out.append((parsed["type"], parsed))
    return out


def delta(**fields: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-7", "choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def test_encoder_orders_blocks_like_anthropic():
    encoder = AnthropicEventEncoder("auto", "msg_x")
    frames = encoder.feed(delta(role="assistant", content=""))
    frames += encoder.feed(delta(content="Hi"))
    frames += encoder.feed(delta(tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": ""}}]))
    frames += encoder.feed(delta(tool_calls=[{"index": 0, "function": {"arguments": '{"a"'}}]))
    frames += encoder.feed(delta(tool_calls=[{"index": 0, "function": {"arguments": ":1}"}}]))
    frames += encoder.feed({"id": "chatcmpl-7", "choices": [
        {"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    frames += encoder.feed({"id": "chatcmpl-7", "choices": [], "usage": {
        "prompt_tokens": 9, "completion_tokens": 4}})
    frames += encoder.end()
    out = events(frames)
    assert [name for name, _ in out] == [
        "message_start", "ping", "content_block_start", "content_block_delta",
        "content_block_stop", "content_block_start", "content_block_delta",
        "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    assert out[0][1]["message"]["id"] == "msg_7"
    assert out[5][1] == {"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "toolu_c1", "name": "f", "input": {}}}
    assert out[9][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert out[9][1]["usage"]["input_tokens"] == 9 and out[9][1]["usage"]["output_tokens"] == 4


def test_an_empty_stream_is_still_a_complete_message():
    names = [name for name, _ in events(AnthropicEventEncoder("auto", "msg_x").end())]
    assert names == ["message_start", "ping", "message_delta", "message_stop"]
