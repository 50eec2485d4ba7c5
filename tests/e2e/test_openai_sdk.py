"""The official openai SDK, unchanged, against the gateway: every endpoint, sync and async."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from tests.e2e.conftest import Gateway

HELLO = [{"role": "user", "content": "Say hello to the gateway."}]


def test_chat_non_streaming(gw: Gateway) -> None:
    raw = gw.client().chat.completions.with_raw_response.create(
        model="auto", messages=HELLO, max_tokens=12)
    completion = raw.parse()
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content
    assert completion.usage is not None
    assert completion.usage.completion_tokens <= 12
    assert completion.usage.prompt_tokens > 0
    assert raw.headers["x-gateway-backend"] in {"sim-a", "sim-b"}
    assert raw.headers["x-gateway-rule"] == "model-pool"
    assert raw.headers["x-request-id"].startswith("req_")
    # price: $1/M input + $2/M output
    usage = completion.usage
    expected = (usage.prompt_tokens * 1 + usage.completion_tokens * 2) / 1e6
    assert float(raw.headers["x-gateway-cost-usd"]) == pytest.approx(expected, abs=1e-6)


def test_different_prompts_spread_over_the_pool_and_a_prefix_sticks(gw: Gateway) -> None:
    client = gw.client()

    def served(content: str, system: str | None = None, **extra: object) -> str:
        messages = [{"role": "user", "content": content}]
        if system is not None:
            messages.insert(0, {"role": "system", "content": system})
        return client.chat.completions.with_raw_response.create(
            model="auto", messages=messages, max_tokens=2, **extra,  # type: ignore[arg-type]
        ).headers["x-gateway-backend"]

    assert {served(f"question number {i}") for i in range(8)} == {"sim-a", "sim-b"}
    # A shared prefix (the system prompt) goes where its KV cache is (the pool is idle, so
    # load allows it); a lone message shares no prefix and is balanced by load instead.
    # (longer than the 2,048 characters the affinity key reads, as real system prompts are)
    system = "You are the support assistant of a large shop; answer briefly. " * 40
    assert len({served(f"question {i}", system=system) for i in range(4)}) == 1
    assert len({
        served(f"turn {i}", extra_headers={"x-session-id": "conversation-7"}) for i in range(4)
    }) == 1


def test_streaming_with_usage(gw: Gateway) -> None:
    stream = gw.client().chat.completions.create(
        model="auto", messages=HELLO, max_tokens=10, stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens <= 10
    assert any(c.choices and c.choices[0].finish_reason for c in chunks)


def test_streaming_without_usage_sends_no_usage_chunk(gw: Gateway) -> None:
    chunks = list(gw.client().chat.completions.create(
        model="auto", messages=HELLO, max_tokens=5, stream=True))
    assert chunks and all(c.choices for c in chunks)
    assert all(c.usage is None for c in chunks)


def test_tools_and_tool_choice(gw: Gateway) -> None:
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]
    client = gw.client()
    completion = client.chat.completions.create(
        model="auto", messages=HELLO, tools=tools,
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    call = completion.choices[0].message.tool_calls[0]
    assert completion.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert "city" in json.loads(call.function.arguments)

    chunks = list(client.chat.completions.create(
        model="auto", messages=HELLO, tools=tools, tool_choice="required", stream=True))
    fragments = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert fragments[0].function.name == "get_weather"
    args = "".join(f.function.arguments or "" for f in fragments)
    assert "city" in json.loads(args)


def test_response_format_json_schema(gw: Gateway) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"},
              "age": {"type": "integer"}}, "required": ["name", "age"]}
    completion = gw.client().chat.completions.create(
        model="auto", messages=HELLO,
        response_format={"type": "json_schema",
                         "json_schema": {"name": "person", "schema": schema}})
    data = json.loads(completion.choices[0].message.content or "")
    assert isinstance(data["name"], str) and isinstance(data["age"], int)


def test_legacy_completions_plain_and_streaming(gw: Gateway) -> None:
    client = gw.client()
    completion = client.completions.create(model="auto", prompt="Once upon a time", max_tokens=6)
    assert completion.object == "text_completion" and completion.choices[0].text
    chunks = list(client.completions.create(
        model="auto", prompt="Once upon a time", max_tokens=6, stream=True))
    assert "".join(c.choices[0].text for c in chunks if c.choices)


def test_embeddings_float_and_base64(gw: Gateway) -> None:
    client = gw.client()
    # one backend: each sim seeds its vectors differently
    default = client.embeddings.create(model="only-b", input=["alpha", "beta"])  # SDK: base64
    as_float = client.embeddings.create(model="only-b", input="alpha", encoding_format="float")
    assert len(default.data) == 2 and len(default.data[0].embedding) > 8
    assert default.data[0].embedding == pytest.approx(as_float.data[0].embedding, abs=1e-6)

    raw = gw.client().embeddings.with_raw_response.create(
        model="only-b", input="alpha", encoding_format="base64")
    encoded = json.loads(raw.text)["data"][0]["embedding"]
    decoded = struct.unpack(f"<{len(base64.b64decode(encoded)) // 4}f", base64.b64decode(encoded))
    assert list(decoded) == pytest.approx(as_float.data[0].embedding, abs=1e-6)


def test_models_list_and_retrieve(gw: Gateway) -> None:
    client = gw.client()
    ids = [m.id for m in client.models.list()]
    assert {"auto", "failover", "sim-a", "sim-b"} <= set(ids)
    model = client.models.retrieve("auto")
    assert model.id == "auto" and model.model_extra["max_model_len"] == 8192


async def test_async_client_chat_stream_and_embeddings(gw: Gateway) -> None:
    client = gw.async_client()
    completion = await client.chat.completions.create(model="auto", messages=HELLO, max_tokens=4)
    assert completion.choices[0].message.content
    stream = await client.chat.completions.create(
        model="auto", messages=HELLO, max_tokens=4, stream=True,
        stream_options={"include_usage": True})
    chunks = [c async for c in stream]
    assert chunks[-1].usage is not None
    embedding = await client.embeddings.create(model="auto", input="x")
    assert embedding.data[0].embedding
    await client.close()
