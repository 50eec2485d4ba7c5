"""Property tests for the request-body parsers at the HTTP edge: whatever a client sends, the
OpenAI parser and the Anthropic translator answer with a typed value or a 400, nothing else."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.api.parsing import parse_route_request
from gateway.errors import InvalidRequest
from gateway.translate.messages_request import to_chat_payload
from gateway.types import ROUTED_ENDPOINTS, Endpoint, RouteRequest

scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12,
)
OPENAI_KEYS = ["model", "messages", "prompt", "input", "stream", "stream_options",
               "max_tokens", "max_completion_tokens", "temperature"]
ANTHROPIC_KEYS = ["model", "messages", "max_tokens", "system", "stop_sequences", "stream",
                  "temperature", "top_p", "top_k", "tools", "tool_choice", "metadata",
                  "output_config", "thinking"]


def objects_with(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects whose keys are mostly the ones the parser looks at, with any values."""
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), json_values,
                           max_size=len(keys))


def check_route_request(got: RouteRequest, payload: dict[str, Any]) -> None:
    assert got.payload == payload  # the body travels on untouched
    assert isinstance(got.model, str) and got.model == payload["model"]
    assert isinstance(got.stream, bool) and isinstance(got.include_usage, bool)
    assert got.max_output_tokens is None or (
        type(got.max_output_tokens) is int and got.max_output_tokens >= 1)


VALID_OPENAI = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "prompt": "p",
                "input": "i"}


# The others are only dispatched (api/responses.py and messages.py parse their own requests).
PARSED = list(ROUTED_ENDPOINTS)


@settings(max_examples=300)
@given(st.sampled_from(PARSED), st.binary(max_size=64) | json_values.map(orjson.dumps)
       | objects_with(OPENAI_KEYS).map(orjson.dumps)
       | objects_with(OPENAI_KEYS).map(lambda extra: orjson.dumps({**VALID_OPENAI, **extra})))
def test_any_body_is_a_route_request_or_a_400(endpoint: Endpoint, body: bytes) -> None:
    try:
        got = parse_route_request(body, endpoint, "req_1")
    except InvalidRequest as exc:
        assert exc.status == 400 and exc.message
        return
    check_route_request(got, orjson.loads(body))


messages = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["system", "user", "assistant"]), "content": st.text(max_size=20)}),
    min_size=1, max_size=4)


@given(
    model=st.text(min_size=1, max_size=30),
    chat=messages,
    stream=st.none() | st.booleans(),
    include_usage=st.none() | st.booleans(),
    max_tokens=st.none() | st.integers(1, 2**31),
    max_completion_tokens=st.none() | st.integers(1, 2**31),
    tags=st.lists(st.text(alphabet="abc-_ ", max_size=6), max_size=4),
    session=st.none() | st.text(min_size=1, max_size=300),
)
def test_a_valid_chat_request_keeps_its_routed_fields(
    model: str, chat: list[dict[str, str]], stream: bool | None, include_usage: bool | None,
    max_tokens: int | None, max_completion_tokens: int | None, tags: list[str],
    session: str | None,
) -> None:
    payload: dict[str, Any] = {"model": model, "messages": chat, "stream": stream,
                               "max_tokens": max_tokens,
                               "max_completion_tokens": max_completion_tokens}
    if include_usage is not None:
        payload["stream_options"] = {"include_usage": include_usage}
    got = parse_route_request(orjson.dumps(payload), Endpoint.CHAT, "req_1",
                              ",".join(tags), session)
    check_route_request(got, payload)
    assert got.stream is bool(stream)
    assert got.include_usage is bool(include_usage)
    assert got.max_output_tokens == (max_completion_tokens or max_tokens)
    assert got.tags == tuple(t.strip() for t in tags if t.strip())
    assert got.session_id == (session[:256] if session else None)


VALID_ANTHROPIC = {"model": "claude", "max_tokens": 10,
                   "messages": [{"role": "user", "content": "hi"}]}


@settings(max_examples=400)
@given(json_values | objects_with(ANTHROPIC_KEYS)
       | objects_with(ANTHROPIC_KEYS).map(lambda extra: {**VALID_ANTHROPIC, **extra}))
def test_any_anthropic_body_is_a_chat_payload_or_a_400(body: Any) -> None:
    try:
        payload = to_chat_payload(body)
    except InvalidRequest as exc:
        assert exc.status == 400 and exc.message
        return
    # What the route handler then reads from it, and what must survive the trip upstream.
    assert isinstance(payload["model"], str) and payload["model"] == body["model"]
    assert type(payload["max_tokens"]) is int and payload["max_tokens"] >= 1
    assert isinstance(payload["messages"], list)
    assert all(isinstance(m, dict) and isinstance(m.get("role"), str)
               for m in payload["messages"])
    orjson.dumps(payload)


turns = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant"]),
    "content": st.text(min_size=1, max_size=20)
    | st.lists(st.fixed_dictionaries({"type": st.just("text"),
                                      "text": st.text(min_size=1, max_size=10)}),
               min_size=1, max_size=2)}), min_size=1, max_size=4)


@given(anthropic_model=st.text(min_size=1, max_size=20), turns=turns,
       max_tokens=st.integers(1, 2**31), system=st.none() | st.text(min_size=1, max_size=20),
       stream=st.booleans())
def test_a_valid_anthropic_request_keeps_its_text_and_limits(
    anthropic_model: str, turns: list[dict[str, Any]], max_tokens: int, system: str | None,
    stream: bool,
) -> None:
    body: dict[str, Any] = {"model": anthropic_model, "messages": turns,
                            "max_tokens": max_tokens, "stream": stream}
    if system is not None:
        body["system"] = system
    payload = to_chat_payload(body)
    assert (payload["model"], payload["max_tokens"]) == (anthropic_model, max_tokens)
    assert bool(payload.get("stream")) is stream

    def text_of(content: Any) -> str:
        return content if isinstance(content, str) else "".join(
            b["text"] for b in content if b.get("type") == "text")

    got = "".join(text_of(m["content"]) for m in payload["messages"] if m.get("content"))
    want = (system or "") + "".join(text_of(t["content"]) for t in turns)
    assert got == want
