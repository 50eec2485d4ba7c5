"""The sim driven by the official openai SDK over real HTTP: chat (plain, streamed, tools,
structured output), completions, embeddings, models, errors, and vLLM's own endpoints."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai import OpenAI
from pydantic import BaseModel

MODEL = "sim-test"
LONG_SYSTEM = " ".join(f"Rule {i}: answer politely and cite the policy section." for i in range(12))
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "days"],
        },
    },
}


@pytest.fixture(scope="module")
def client(sim_url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{sim_url}/v1", api_key="sk-sim", max_retries=0) as sdk:
        yield sdk


def messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": LONG_SYSTEM}, {"role": "user", "content": question}]


def test_chat_answers_with_usage_and_prefix_cache_hits(client: OpenAI, sim_url: str) -> None:
    first = client.chat.completions.create(model=MODEL, messages=messages("What is a KV cache?"))
    choice = first.choices[0]
    assert first.id.startswith("chatcmpl-") and first.model == MODEL
    assert choice.message.role == "assistant" and choice.message.content
    assert choice.finish_reason == "stop"
    usage = first.usage
    assert usage is not None and usage.completion_tokens > 0
    counted = httpx.post(
        f"{sim_url}/tokenize", json={"model": MODEL, "messages": messages("What is a KV cache?")}
    ).json()
    assert usage.prompt_tokens == counted["count"] > 100
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens

    again = client.chat.completions.create(model=MODEL, messages=messages("What is a KV cache?"))
    assert again.choices[0].message.content == choice.message.content  # deterministic
    assert again.usage is not None and again.usage.prompt_tokens_details is not None
    cached = again.usage.prompt_tokens_details.cached_tokens
    assert cached is not None and usage.prompt_tokens - 16 <= cached < usage.prompt_tokens


def test_max_tokens_cuts_with_length(client: OpenAI) -> None:
    response = client.chat.completions.create(
        model=MODEL, messages=messages("Long story please"), max_completion_tokens=4
    )
    assert response.choices[0].finish_reason == "length"
    assert response.usage is not None and response.usage.completion_tokens == 4


def test_stream_with_usage_matches_the_plain_answer(client: OpenAI) -> None:
    plain = client.chat.completions.create(model=MODEL, messages=messages("Stream me"))
    chunks = list(
        client.chat.completions.create(
            model=MODEL,
            messages=messages("Stream me"),
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    first, *body, usage_chunk = chunks
    assert first.choices[0].delta.role == "assistant" and first.choices[0].delta.content == ""
    assert all(c.choices[0].delta.content for c in body)
    # As vLLM does, the last token's chunk carries the finish reason.
    assert [c.choices[0].finish_reason for c in body[-2:]] == [None, "stop"]
    assert usage_chunk.choices == [] and usage_chunk.usage is not None
    assert usage_chunk.usage.completion_tokens == len(body)  # one chunk per token
    streamed = "".join(c.choices[0].delta.content or "" for c in body)
    assert streamed == plain.choices[0].message.content
    assert len({c.id for c in chunks}) == 1


def test_required_tool_choice_returns_a_tool_call(client: OpenAI) -> None:
    response = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice="required",
    )
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (call,) = choice.message.tool_calls or []
    assert call.type == "function" and call.function.name == "get_weather"
    arguments = json.loads(call.function.arguments)
    assert set(arguments) == {"city", "days"} and isinstance(arguments["days"], int)


def test_streamed_tool_call_fragments_like_openai(client: OpenAI) -> None:
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        stream=True,
    )
    fragments = []
    finish = None
    for chunk in stream:
        delta = chunk.choices[0].delta
        fragments.extend(delta.tool_calls or [])
        finish = chunk.choices[0].finish_reason or finish
    head, *rest = fragments
    assert head.index == 0 and head.id and head.type == "function"
    assert head.function is not None and head.function.name == "get_weather"
    assert rest and all(f.id is None and f.function and f.function.name is None for f in rest)
    arguments = "".join((f.function.arguments or "") for f in fragments if f.function)
    assert set(json.loads(arguments)) == {"city", "days"}
    assert finish == "tool_calls"


class Ticket(BaseModel):
    title: str
    priority: int
    tags: list[str]
    urgent: bool


def test_structured_output_parses_into_the_schema(client: OpenAI) -> None:
    response = client.chat.completions.parse(
        model=MODEL,
        messages=[{"role": "user", "content": "File a ticket"}],
        response_format=Ticket,
    )
    ticket = response.choices[0].message.parsed
    assert isinstance(ticket, Ticket) and ticket.tags


def test_json_object_mode_returns_json(client: OpenAI) -> None:
    response = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "JSON please"}],
        response_format={"type": "json_object"},
    )
    assert isinstance(json.loads(response.choices[0].message.content or ""), dict)


def test_completions_plain_and_streamed(client: OpenAI) -> None:
    plain = client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=6)
    assert plain.object == "text_completion" and plain.choices[0].finish_reason == "length"
    assert plain.usage is not None and plain.usage.completion_tokens == 6
    chunks = list(
        client.completions.create(
            model=MODEL,
            prompt="Once upon a time",
            max_tokens=6,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == plain.choices[0].text
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 6
    default = client.completions.create(model=MODEL, prompt="Once upon a time")
    assert default.usage is not None and default.usage.completion_tokens <= 16


def test_embeddings_float_and_base64_agree(client: OpenAI) -> None:
    floats = client.embeddings.create(model=MODEL, input=["alpha", "beta"], encoding_format="float")
    decoded = client.embeddings.create(model=MODEL, input=["alpha", "beta"])  # SDK asks base64
    assert [d.index for d in floats.data] == [0, 1]
    for a, b in zip(floats.data, decoded.data, strict=True):
        assert len(a.embedding) == 64
        assert math.isclose(math.fsum(v * v for v in a.embedding), 1.0, rel_tol=1e-9)
        assert a.embedding == pytest.approx(b.embedding, abs=1e-6)
    assert floats.data[0].embedding != floats.data[1].embedding
    assert floats.usage.prompt_tokens == 2
    shorter = client.embeddings.create(model=MODEL, input="alpha", dimensions=8)
    assert len(shorter.data[0].embedding) == 8


def test_models_list_is_a_vllm_model_card(client: OpenAI, sim_url: str) -> None:
    (model,) = client.models.list().data
    assert model.id == MODEL and model.owned_by == "gateway-sim"
    card = httpx.get(f"{sim_url}/v1/models").json()["data"][0]
    assert card["max_model_len"] == 8192 and card["root"] == MODEL and card["parent"] is None


def test_errors_use_vllm_envelope(client: OpenAI, sim_url: str) -> None:
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=messages("hi"))
    with pytest.raises(openai.BadRequestError, match="cannot be greater than max_model_len"):
        client.chat.completions.create(model=MODEL, messages=messages("hi"), max_tokens=9000)
    huge = "word " * 8200
    with pytest.raises(openai.BadRequestError, match="maximum context length is 8192 tokens"):
        client.chat.completions.create(model=MODEL, messages=messages(huge), max_tokens=10)
    raw = httpx.post(
        f"{sim_url}/v1/chat/completions",
        json={"model": MODEL, "n": 3, "messages": messages("hi")},
    )
    assert raw.status_code == 400
    error = raw.json()["error"]
    assert error["code"] == 400 and error["type"] == "BadRequestError" and "param" in error


def test_vllm_side_endpoints(sim_url: str) -> None:
    health = httpx.get(f"{sim_url}/health")
    assert health.status_code == 200 and health.content == b""
    assert httpx.get(f"{sim_url}/version").json()["version"].startswith("0.32")
    tokens = httpx.post(f"{sim_url}/tokenize", json={"prompt": "Hello, world"}).json()
    assert tokens["count"] == len(tokens["tokens"]) == 4 and tokens["max_model_len"] == 8192
    text = httpx.post(f"{sim_url}/detokenize", json={"tokens": tokens["tokens"][1:]}).json()
    assert text == {"prompt": "Hello, world"}


def test_ids_follow_the_callers_request_id(client: OpenAI, sim_url: str) -> None:
    response = client.chat.completions.create(
        model=MODEL, messages=messages("hi"), max_tokens=1, extra_headers={"X-Request-Id": "r-42"}
    )
    assert response.id == "chatcmpl-r-42"
    assert httpx.get(f"{sim_url}/v1/models/{MODEL}").json()["id"] == MODEL
    assert httpx.get(f"{sim_url}/v1/models/other").status_code == 404
