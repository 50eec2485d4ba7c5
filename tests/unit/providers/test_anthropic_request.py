"""OpenAI chat request → Anthropic Messages request: pure, no fixtures."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from gateway.errors import InvalidRequest
from gateway.translate.anthropic_request import JSON_TOOL_NAME, to_messages_request
from gateway.types import Backend
from gateway.types.provider_options import AnthropicOptions

CLAUDE = Backend("claude", "anthropic", "https://api.anthropic.com/v1", "claude-x", "external",
                 200_000, 4)
USER = {"role": "user", "content": "hi"}
TOOL = {"type": "function", "function": {"name": "get", "description": "d", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}


def body(**payload: Any) -> dict[str, Any]:
    payload.setdefault("messages", [USER])
    return to_messages_request({"model": "m", **payload}, CLAUDE, stream=False).body


def refused(**payload: Any) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as info:
        body(**payload)
    assert "claude (anthropic)" in info.value.message and info.value.status == 400
    return info.value


def test_system_and_developer_messages_become_system_blocks():
    out = body(messages=[{"role": "system", "content": "a"}, USER,
                         {"role": "developer", "content": [{"type": "text", "text": "b"}]}])
    assert out["system"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert out["model"] == "claude-x"


def test_images_and_pdfs():
    parts = [{"type": "text", "text": "look"},
             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
             {"type": "image_url", "image_url": {"url": "https://x/y.jpg", "detail": "low"}},
             {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE"}}]
    content = body(messages=[{"role": "user", "content": parts}])["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "image", "source": {"type": "url", "url": "https://x/y.jpg"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": "JVBE"}}]
    bad = refused(messages=[{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,AA"}}]}])
    assert bad.param == "messages[0].content[0].image_url"


def test_tool_calls_and_results_pair_up_and_adjacent_turns_merge():
    messages = [USER,
                {"role": "assistant", "content": "checking", "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "get", "arguments": '{"city":"Oslo"}'}},
                    {"id": "c2", "type": "function",
                     "function": {"name": "get", "arguments": ""}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "rain"},
                {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "?"}]},
                {"role": "user", "content": "thanks"}]
    out = body(messages=messages, tools=[TOOL])["messages"]
    assert out[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "checking"},
        {"type": "tool_use", "id": "c1", "name": "get", "input": {"city": "Oslo"}},
        {"type": "tool_use", "id": "c2", "name": "get", "input": {}}]}
    assert out[2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": "rain"},
        {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "?"}]},
        {"type": "text", "text": "thanks"}]}
    bad = refused(messages=[USER, {"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "get", "arguments": "[1"}}]}])
    assert bad.param == "messages[1].tool_calls[0].function.arguments"


def test_max_tokens_comes_from_either_field_or_a_documented_default():
    assert body()["max_tokens"] == 4096
    assert body(max_tokens=10)["max_tokens"] == 10
    assert body(max_completion_tokens=20, max_tokens=10)["max_tokens"] == 20
    custom = replace(CLAUDE, options=AnthropicOptions(default_max_tokens=512))
    assert to_messages_request({"messages": [USER]}, custom, stream=True).body["max_tokens"] == 512


@pytest.mark.parametrize("given,sent", [(0, 0.0), (0.7, 0.7), (1, 1.0), (1.5, 1.0), (2, 1.0)])
def test_temperature_is_clamped_to_anthropics_range(given: float, sent: float):
    assert body(temperature=given)["temperature"] == sent


def test_stop_sequences_without_whitespace_only_entries():
    assert body(stop="END")["stop_sequences"] == ["END"]
    assert body(stop=["\n", "END", " "])["stop_sequences"] == ["END"]
    assert "stop_sequences" not in body(stop=["\n\n"])


@pytest.mark.parametrize("choice,mapped", [
    ("auto", {"type": "auto"}),
    ("required", {"type": "any"}),
    ("none", {"type": "none"}),
    ({"type": "function", "function": {"name": "get"}}, {"type": "tool", "name": "get"}),
    ({"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "get"}}]}}, {"type": "any"}),
])
def test_tool_choice(choice: Any, mapped: dict[str, Any]):
    out = body(tools=[TOOL], tool_choice=choice)
    assert out["tool_choice"] == mapped
    assert out["tools"] == [{"name": "get", "description": "d", "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}}}}]


def test_parallel_tool_calls_false_and_the_default():
    assert "tool_choice" not in body(tools=[TOOL])
    assert body(tools=[TOOL], parallel_tool_calls=False)["tool_choice"] == {
        "type": "auto", "disable_parallel_tool_use": True}
    assert body(tools=[TOOL], tool_choice="none", parallel_tool_calls=False)["tool_choice"] == {
        "type": "none"}
    no_schema = {"type": "function", "function": {"name": "ping"}}
    assert body(tools=[no_schema])["tools"][0]["input_schema"] == {
        "type": "object", "properties": {}}


def test_json_schema_becomes_a_forced_tool():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    request = to_messages_request({"messages": [USER], "response_format": fmt}, CLAUDE,
                                  stream=False)
    assert request.json_mode is not None and not request.json_mode.wrapped
    assert request.body["tools"][0]["input_schema"] == schema
    assert request.body["tool_choice"] == {"type": "tool", "name": JSON_TOOL_NAME}
    array = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "array"}}}
    wrapped = to_messages_request({"messages": [USER], "response_format": array}, CLAUDE,
                                  stream=False)
    assert wrapped.json_mode is not None and wrapped.json_mode.wrapped
    assert wrapped.body["tools"][0]["input_schema"]["properties"] == {"value": {"type": "array"}}
    assert body(response_format={"type": "json_object"})["tools"][0]["input_schema"]["type"] == \
        "object"
    assert "tools" not in body(response_format={"type": "text"})


def test_json_schema_with_client_tools_lets_the_model_pick_either():
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    out = body(tools=[TOOL], response_format=fmt)
    assert [t["name"] for t in out["tools"]] == ["get", JSON_TOOL_NAME]
    assert out["tool_choice"] == {"type": "any"}


def test_reasoning_effort_becomes_a_thinking_budget():
    out = body(reasoning_effort="medium", temperature=0.2, max_completion_tokens=8000)
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in out and out["max_tokens"] == 8000
    assert body(reasoning_effort="high")["max_tokens"] > 4096
    assert "thinking" not in body(reasoning_effort="minimal")
    assert refused(reasoning_effort="low", max_tokens=500).param == "max_completion_tokens"
    assert refused(reasoning_effort="low", tools=[TOOL], tool_choice="required").param == \
        "reasoning_effort"


@pytest.mark.parametrize("extra,param", [
    ({"n": 2}, "n"), ({"logprobs": True}, "logprobs"), ({"top_logprobs": 3}, "top_logprobs"),
    ({"logit_bias": {"1": 5}}, "logit_bias"), ({"audio": {"voice": "x"}}, "audio"),
    ({"ignore_eos": True}, "ignore_eos"), ({"functions": []}, "functions"),
    ({"tools": [{"type": "custom", "custom": {"name": "x"}}]}, "tools[0].type"),
    ({"messages": [{"role": "function", "content": "x"}]}, "messages[0].role"),
])
def test_what_anthropic_cannot_do_is_refused_by_name(extra: dict[str, Any], param: str):
    assert refused(**extra).param == param


def test_harmless_hints_are_dropped_and_ids_that_look_personal_never_leave():
    out = body(seed=1, frequency_penalty=0.5, presence_penalty=0.1, store=True, n=1,
               metadata={"a": "b"}, logprobs=False, service_tier="auto", user="a@b.com",
               stream_options={"include_usage": True})
    assert set(out) == {"model", "messages", "max_tokens"}
    assert body(user="u-123")["metadata"] == {"user_id": "u-123"}
    assert to_messages_request({"messages": [USER]}, CLAUDE, stream=True).body["stream"] is True
