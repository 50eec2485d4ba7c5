"""openai SDK → gateway → a server speaking Anthropic's Messages API: plain and streaming, tools
and not, structured output, and every error class."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.commercial.conftest import ENV, Rig

HELLO = [{"role": "user", "content": "Say hello to the gateway."}]
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "days": {"type": "integer"}},
                   "required": ["city"]}}}


def test_plain_chat_is_translated_both_ways(gw: Rig) -> None:
    cached = {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    messages = [{"role": "system", "content": [cached]},
                {"role": "developer", "content": "Answer in English."}, *HELLO]
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="claude", messages=messages, temperature=1.6, stop=["\n", "zzz"], user="team-7")
    reply = raw.parse()
    assert raw.headers["x-gateway-backend"] == "claude"
    assert reply.choices[0].message.content.startswith("Hello from mock Claude")
    assert reply.choices[0].finish_reason == "stop"
    # Anthropic's input_tokens excludes cache reads; OpenAI's prompt_tokens includes them.
    sent = gw.claude.last()
    usage = reply.usage
    assert usage is not None and usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 100
    assert usage.prompt_tokens > 100 and usage.total_tokens == usage.prompt_tokens + \
        usage.completion_tokens
    body = sent.body
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Answer in English."}]
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Say hello to the gateway."}]}]
    assert body["max_tokens"] == 4096 and body["temperature"] == 1.0
    assert body["stop_sequences"] == ["zzz"] and body["metadata"] == {"user_id": "team-7"}
    assert body["model"] == "claude-sonnet-test"
    assert sent.headers["x-api-key"] == ENV["TEST_ANTHROPIC_KEY"]
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert not [h for h in sent.headers if h.startswith("x-stainless")]


def test_streaming_matches_the_plain_reply_and_usage_comes_last(gw: Rig) -> None:
    client = gw.openai()
    plain = client.chat.completions.create(model="claude", messages=HELLO)
    chunks = list(client.chat.completions.create(
        model="claude", messages=HELLO, stream=True, stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens  # type: ignore[union-attr]
    assert len({c.id for c in chunks}) == 1
    assert gw.claude.last().body["stream"] is True
    without = list(client.chat.completions.create(model="claude", messages=HELLO, stream=True))
    assert all(c.choices for c in without)


def test_sse_framing_is_openais(gw: Rig) -> None:
    with httpx.stream("POST", f"{gw.url}/v1/chat/completions", timeout=30,
                      headers={"Authorization": f"Bearer {gw.key}"},
                      json={"model": "claude", "messages": HELLO, "stream": True}) as resp:
        raw = resp.read()
    events = raw.split(b"\n\n")
    assert events[-2:] == [b"data: [DONE]", b""]
    assert all(e.startswith(b"data: {") and b"event:" not in e for e in events[:-2])


@pytest.mark.parametrize("stream", [False, True])
def test_tool_call_round_trip(gw: Rig, stream: bool) -> None:
    client = gw.openai()
    messages: list[dict[str, object]] = [{"role": "user", "content": "Weather in Paris?"}]
    if stream:
        chunks = list(client.chat.completions.create(
            model="claude", messages=messages, tools=[WEATHER_TOOL], stream=True))
        fragments = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or ()]
        first = fragments[0]
        assert first.id and first.function and first.function.name == "get_weather"
        arguments = "".join(f.function.arguments or "" for f in fragments if f.function)
        call_id, finish = first.id, [c.choices[0].finish_reason for c in chunks if c.choices][-1]
    else:
        reply = client.chat.completions.create(model="claude", messages=messages,
                                               tools=[WEATHER_TOOL], parallel_tool_calls=False)
        call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert call.type == "function" and call.function.name == "get_weather"
        arguments, call_id, finish = call.function.arguments, call.id, \
            reply.choices[0].finish_reason
        assert reply.choices[0].message.content == "Let me check."
        assert gw.claude.last().body["tool_choice"] == {
            "type": "auto", "disable_parallel_tool_use": True}
    assert finish == "tool_calls"
    assert json.loads(arguments) == {"city": "Paris", "days": 3}
    assert gw.claude.last().body["tools"][0]["input_schema"] == \
        WEATHER_TOOL["function"]["parameters"]  # type: ignore[index]
    # The mock, like Anthropic, rejects a tool_result that does not answer the tool_use.
    messages += [{"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function",
         "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny, 21°C"}]
    follow = client.chat.completions.create(model="claude", messages=messages,
                                            tools=[WEATHER_TOOL])
    assert follow.choices[0].message.content == "The tool said: sunny, 21°C"
    turn = gw.claude.last().body["messages"][-1]
    assert turn == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": "sunny, 21°C"}]}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("schema,expected", [
    ({"type": "object", "properties": {"city": {"type": "string"}}}, {"city": "Paris"}),
    ({"type": "array", "items": {"type": "string"}}, ["Paris"]),
])
def test_json_schema_comes_back_as_content(gw: Rig, stream: bool, schema: object,
                                           expected: object) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    kwargs = {"model": "claude", "messages": HELLO, "response_format": fmt}
    client = gw.openai()
    if stream:
        chunks = list(client.chat.completions.create(**kwargs, stream=True))  # type: ignore[call-overload]
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
        assert not any(c.choices[0].delta.tool_calls for c in chunks if c.choices)
    else:
        reply = client.chat.completions.create(**kwargs)  # type: ignore[call-overload]
        content, finish = reply.choices[0].message.content, reply.choices[0].finish_reason
        assert reply.choices[0].message.tool_calls is None
    assert json.loads(content) == expected and finish == "stop"
    assert gw.claude.last().body["tool_choice"] == {"type": "tool", "name": "json_response"}


def test_stop_sequence_and_max_tokens_finish_reasons(gw: Rig) -> None:
    client = gw.openai()
    stopped = client.chat.completions.create(model="claude", messages=HELLO, stop="Claude")
    assert stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].message.content == "Hello from mock "
    cut = client.chat.completions.create(model="claude", messages=HELLO, max_tokens=2)
    assert cut.choices[0].finish_reason == "length"
    assert gw.claude.last().body["max_tokens"] == 2


def test_the_backends_default_max_tokens_applies(gw: Rig) -> None:
    gw.openai().chat.completions.create(model="claude-backup", messages=HELLO)
    assert gw.claude.last().body["max_tokens"] == 1024
    assert gw.claude.last().body["model"] == "claude-backup"
