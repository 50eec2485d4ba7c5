"""Property tests for what upstreams send back: OpenAI-family usage, Anthropic messages and
every dialect's error bodies. Whatever the bytes, the gateway gets token counts it can price
and store, an OpenAI-shaped completion, or a typed upstream error; never an exception."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.errors import GatewayError
from gateway.providers.anthropic_errors import anthropic_error
from gateway.providers.openai_compat import usage_from_body, usage_from_obj
from gateway.providers.upstream_errors import normalise_upstream_error, parse_error_body
from gateway.translate.anthropic_reply import to_chat_completion
from gateway.types import Usage

INT32 = 2**31 - 1  # audit_log's token columns
scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                           max_leaves=10)
counts = st.integers(0, INT32) | scalars


def assert_storable(usage: Usage) -> None:
    for value in (usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens):
        assert type(value) is int and 0 <= value <= INT32


def objects(keys: list[str], values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), values,
                           max_size=len(keys))


openai_usages = objects(["prompt_tokens", "completion_tokens", "total_tokens",
                         "prompt_tokens_details"],
                        counts | objects(["cached_tokens"], counts))


@settings(max_examples=300)
@given(st.binary(max_size=40) | json_values.map(orjson.dumps)
       | (json_values | openai_usages).map(lambda u: orjson.dumps({"id": "x", "usage": u})))
def test_any_openai_body_gives_storable_usage_or_none(body: bytes) -> None:
    usage = usage_from_body(body)
    if usage is not None:
        assert_storable(usage)


@given(st.integers(0, INT32), st.integers(0, INT32), st.integers(0, INT32))
def test_valid_openai_usage_is_read_as_sent(prompt: int, completion: int, cached: int) -> None:
    usage = usage_from_obj({"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                            "prompt_tokens_details": {"cached_tokens": cached}})
    assert usage == Usage(prompt, completion, cached)


blocks = json_values | objects(["type", "text", "thinking", "id", "name", "input"],
                               st.sampled_from(["text", "thinking", "tool_use", "other"])
                               | json_values)
anthropic_usages = json_values | objects(
    ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
    counts)
messages = st.fixed_dictionaries(
    {"type": st.just("message")},
    optional={"id": json_values, "model": json_values, "stop_reason": json_values,
              "stop_sequence": json_values, "usage": anthropic_usages,
              "content": json_values | st.lists(blocks, max_size=4)})


@settings(max_examples=300)
@given(messages)
def test_any_anthropic_message_gives_a_completion_and_storable_usage(
    message: dict[str, Any]
) -> None:
    body, usage = to_chat_completion(message, None, 1)
    assert_storable(usage)
    completion = orjson.loads(body)
    [choice] = completion["choices"]
    assert choice["message"]["role"] == "assistant"
    assert completion["usage"]["prompt_tokens"] == usage.prompt_tokens
    assert completion["usage"]["completion_tokens"] == usage.completion_tokens


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6),
       st.integers(0, 10**6), st.text(max_size=20))
def test_valid_anthropic_usage_and_text_are_read_as_sent(
    fresh: int, read: int, written: int, output: int, text: str
) -> None:
    message = {"type": "message", "id": "msg_1", "model": "claude", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": fresh, "output_tokens": output,
                         "cache_read_input_tokens": read,
                         "cache_creation_input_tokens": written}}
    body, usage = to_chat_completion(message, None, 1)
    assert usage == Usage(fresh + read + written, output, read, written)
    assert orjson.loads(body)["choices"][0]["message"]["content"] == text


error_bodies = (st.binary(max_size=60) | json_values.map(orjson.dumps)
                | objects(["error", "message", "detail", "type", "code", "param", "object"],
                          json_values | objects(["message", "type", "code", "param"],
                                                json_values)).map(orjson.dumps))


@settings(max_examples=300)
@given(st.integers(100, 599), error_bodies)
def test_any_upstream_error_body_becomes_an_openai_error(status: int, body: bytes) -> None:
    message, etype, param, code = parse_error_body(status, body)
    assert isinstance(message, str) and message
    assert all(v is None or isinstance(v, str) for v in (etype, param, code))
    for err, retryable in (normalise_upstream_error(status, body, "b"),
                           anthropic_error(status, body, "b")):
        assert isinstance(err, GatewayError) and isinstance(retryable, bool)
        assert 400 <= err.status <= 599 and isinstance(err.message, str)
        if status in (401, 403):  # the body may quote the gateway's own upstream key
            # (the message's own "(HTTP 401)" is no quote of a body that reads "401")
            quoted = err.message.replace(f"(HTTP {status})", "")
            assert body.decode("utf-8", "replace").strip() not in quoted or len(
                body.strip()) < 3
