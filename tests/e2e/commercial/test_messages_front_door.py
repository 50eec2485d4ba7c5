"""The official anthropic SDK → gateway `/v1/messages` → a vLLM-speaking server (and, full
circle, an Anthropic-speaking one): replies, stream events and errors in Anthropic's shape."""

from __future__ import annotations

import time

import anthropic
import httpx
import orjson
import pytest

from tests.e2e.commercial.conftest import Rig
from tests.support.audit_mirror import mirror_rows
from tests.support.mock_anthropic import Fault

HELLO = [{"role": "user", "content": "Say hello to the gateway."}]
WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}


def test_plain_message_from_a_vllm_backend(gw: Rig) -> None:
    raw = gw.anthropic().messages.with_raw_response.create(
        model="local", max_tokens=16, system="Be brief.", messages=HELLO)
    message = raw.parse()
    assert raw.headers["x-gateway-backend"] == "local"
    assert raw.headers["request-id"] == raw.headers["x-request-id"]
    assert message.type == "message" and message.role == "assistant"
    assert message.id.startswith("msg_") and message.model == "local"
    assert message.content[0].type == "text" and message.content[0].text
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


def test_bearer_auth_works_too(gw: Rig) -> None:
    with anthropic.Anthropic(base_url=gw.url, auth_token=gw.key, max_retries=0) as client:
        assert client.messages.create(model="local", max_tokens=4, messages=HELLO).content


def test_streaming_with_the_sdk_helper(gw: Rig) -> None:
    with gw.anthropic().messages.stream(model="local", max_tokens=24, messages=HELLO) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text and final.content[0].type == "text" and final.content[0].text == text
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.usage.output_tokens > 0 and final.usage.input_tokens > 0


def test_stream_events_are_anthropics_exactly(gw: Rig) -> None:
    with httpx.stream("POST", f"{gw.url}/v1/messages", timeout=30,
                      headers={"x-api-key": gw.key, "anthropic-version": "2023-06-01"},
                      json={"model": "local", "max_tokens": 8, "messages": HELLO,
                            "stream": True}) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        raw = resp.read()
    assert b"[DONE]" not in raw
    names = []
    for block in raw.split(b"\n\n")[:-1]:
        event_line, data_line = block.split(b"\n")
        name = event_line.removeprefix(b"event: ").decode()
        assert orjson.loads(data_line.removeprefix(b"data: "))["type"] == name
        names.append(name)
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert set(names[3:-3]) == {"content_block_delta"}
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]


@pytest.mark.parametrize("stream", [False, True])
def test_forced_tool_from_a_vllm_backend(gw: Rig, stream: bool) -> None:
    kwargs = {"model": "local", "max_tokens": 64, "messages": HELLO, "tools": [WEATHER],
              "tool_choice": {"type": "tool", "name": "get_weather"}}
    client = gw.anthropic()
    if stream:
        with client.messages.stream(**kwargs) as events:  # type: ignore[arg-type]
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs)  # type: ignore[arg-type]
    calls = [b for b in message.content if b.type == "tool_use"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    assert isinstance(calls[0].input, dict) and isinstance(calls[0].input.get("city"), str)
    assert message.stop_reason == "tool_use"


def test_tool_round_trip_full_circle_through_an_anthropic_backend(gw: Rig) -> None:
    client = gw.anthropic()
    first = client.messages.create(model="claude", max_tokens=64, tools=[WEATHER],  # type: ignore[list-item]
                                   messages=[{"role": "user", "content": "Paris weather?"}])
    call = next(b for b in first.content if b.type == "tool_use")
    assert call.input == {"city": "Paris"} and first.stop_reason == "tool_use"
    follow = client.messages.create(model="claude", max_tokens=64, tools=[WEATHER],  # type: ignore[list-item]
                                    messages=[
        {"role": "user", "content": "Paris weather?"},
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": "sunny"}]}])
    assert follow.content[0].text == "The tool said: sunny"  # type: ignore[union-attr]
    assert follow.stop_reason == "end_turn"


def test_stop_sequence_survives_full_circle(gw: Rig) -> None:
    message = gw.anthropic().messages.create(model="claude", max_tokens=64, messages=HELLO,
                                             stop_sequences=["Claude"])
    assert message.stop_reason == "stop_sequence" and message.stop_sequence == "Claude"


def test_count_tokens(gw: Rig) -> None:
    counted = gw.anthropic().messages.count_tokens(model="local", messages=HELLO)
    assert counted.input_tokens > 5


def test_errors_are_anthropic_shaped(gw: Rig) -> None:
    with anthropic.Anthropic(base_url=gw.url, api_key="sk-gw-wrong", max_retries=0) as stranger, \
            pytest.raises(anthropic.AuthenticationError) as auth:
        stranger.messages.create(model="local", max_tokens=4, messages=HELLO)
    assert auth.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
    assert auth.value.request_id and auth.value.request_id.startswith("req_")
    with gw.anthropic() as client:
        with pytest.raises(anthropic.NotFoundError):
            client.messages.create(model="no-such-model", max_tokens=4, messages=HELLO)
        with pytest.raises(anthropic.InternalServerError) as dead:
            client.messages.create(model="all-dead", max_tokens=4, messages=HELLO)
    assert dead.value.status_code == 502
    resp = httpx.post(f"{gw.url}/v1/messages", headers={"x-api-key": gw.key},
                      json={"model": "local", "messages": HELLO})
    body = resp.json()
    assert resp.status_code == 400 and set(body) == {"type", "error", "request_id"}
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in body["error"]["message"]


def test_upstream_request_error_reaches_a_claude_client_as_400(gw: Rig) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        gw.anthropic().messages.create(model="claude", max_tokens=8,
                                       messages=[{"role": "user", "content": "TRIGGER_400"}])
    assert "prompt is too long" in info.value.message


def test_mid_stream_failure_is_an_error_event_the_sdk_raises(gw: Rig) -> None:
    gw.claude.faults.append(Fault(stream_error_after=6))
    with pytest.raises(anthropic.APIStatusError) as info:
        with gw.anthropic().messages.stream(model="claude", max_tokens=64,
                                            messages=HELLO) as stream:
            for _ in stream.text_stream:
                pass
    assert "overloaded" in str(info.value.body).lower()


def test_front_door_requests_are_audited_like_any_other(gw: Rig) -> None:
    raw = gw.anthropic().messages.with_raw_response.create(model="local", max_tokens=4,
                                                           messages=HELLO)
    request_id = raw.headers["request-id"]
    deadline = time.monotonic() + 5
    while True:
        rows = [r for r in mirror_rows(gw.audit_path) if r["request_id"] == request_id]
        if rows:
            break
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert rows[0]["backend"] == "local" and rows[0]["completion_tokens"] > 0
    # Routed as chat, but recorded as the API the client called (covered by the row hash).
    assert rows[0]["endpoint"] == "chat/completions" and rows[0]["entry_point"] == "messages"


def test_upstream_rate_limit_is_a_429_for_the_claude_sdk(gw: Rig) -> None:
    gw.claude.faults.append(Fault("rate_limit_error"))
    with gw.anthropic() as client, pytest.raises(anthropic.RateLimitError) as info:
        client.messages.create(model="claude", max_tokens=8, messages=HELLO)
    assert info.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
