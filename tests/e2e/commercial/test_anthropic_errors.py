"""Anthropic's error classes as an openai SDK client sees them: request errors keep their status
with OpenAI's types, 429/529 and the gateway's own misconfiguration fail over, trouble after
the first byte ends the stream with an error event, and unsupported parameters are a clear 400."""

from __future__ import annotations

import openai
import pytest

from tests.e2e.commercial.conftest import Rig
from tests.support.mock_anthropic import Fault

HELLO = [{"role": "user", "content": "Say hello to the gateway."}]


def test_a_400_about_the_request_keeps_status_and_openai_type(gw: Rig) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai().chat.completions.create(
            model="claude", messages=[{"role": "user", "content": "TRIGGER_400"}])
    assert info.value.status_code == 400
    assert info.value.type == "invalid_request_error"
    assert "prompt is too long" in info.value.message


def test_413_is_passed_on(gw: Rig) -> None:
    gw.claude.faults.append(Fault("request_too_large", "Request exceeds the maximum size"))
    with pytest.raises(openai.APIStatusError) as info:
        gw.openai().chat.completions.create(model="claude", messages=HELLO)
    assert info.value.status_code == 413
    assert info.value.code == "request_too_large"
    assert info.value.type == "invalid_request_error"


@pytest.mark.parametrize("error_type", ["rate_limit_error", "overloaded_error", "api_error"])
@pytest.mark.parametrize("stream", [False, True])
def test_retryable_errors_fail_over_to_the_next_candidate(
    gw: Rig, error_type: str, stream: bool
) -> None:
    gw.claude.faults.append(Fault(error_type))
    kwargs: dict[str, object] = {"stream": True} if stream else {}
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="claude-pool", messages=HELLO, **kwargs)
    assert raw.headers["x-gateway-backend"] == "claude-backup"
    assert raw.headers["x-gateway-attempts"] == "2"


def test_when_every_candidate_is_overloaded_the_client_gets_a_retryable_5xx(gw: Rig) -> None:
    gw.claude.faults.extend([Fault("overloaded_error"), Fault("overloaded_error")])
    with pytest.raises(openai.InternalServerError) as info:
        gw.openai().chat.completions.create(model="claude-pool", messages=HELLO)
    assert info.value.status_code == 502 and info.value.code == "overloaded"
    assert "claude-backup" in info.value.message


def test_rate_limited_everywhere_is_a_429(gw: Rig) -> None:
    gw.claude.faults.append(Fault("rate_limit_error"))
    with pytest.raises(openai.RateLimitError) as info:
        gw.openai().chat.completions.create(model="claude", messages=HELLO)
    assert info.value.code == "rate_limit_exceeded"


def test_the_gateways_bad_upstream_key_is_not_the_clients_401(gw: Rig) -> None:
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="claude-misconfigured", messages=HELLO)
    assert raw.headers["x-gateway-backend"] == "claude"  # failed over
    with pytest.raises(openai.InternalServerError) as info:
        gw.openai().chat.completions.create(model="claude-badkey", messages=HELLO)
    assert info.value.code == "upstream_misconfigured"
    assert "sk-ant" not in info.value.message  # secrets never appear in errors


def test_unknown_upstream_model_is_the_gateways_misconfiguration(gw: Rig) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        gw.openai().chat.completions.create(model="claude-missing", messages=HELLO)
    assert info.value.code == "upstream_misconfigured"


def test_error_event_before_message_start_still_fails_over(gw: Rig) -> None:
    gw.claude.faults.append(Fault(stream_error_after=0))
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="claude-pool", messages=HELLO, stream=True)
    assert raw.headers["x-gateway-backend"] == "claude-backup"
    chunks = list(raw.parse())
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


@pytest.mark.parametrize("fault", [Fault(stream_error_after=6), Fault(drop_after=6)])
def test_failure_after_content_reaches_the_sdk_as_an_error(gw: Rig, fault: Fault) -> None:
    gw.claude.faults.append(fault)
    stream = gw.openai().chat.completions.create(model="claude", messages=HELLO, stream=True)
    received = []
    with pytest.raises(openai.APIError) as info:
        for chunk in stream:
            received.append(chunk)
    assert any(c.choices and c.choices[0].delta.content for c in received)
    assert "claude" in info.value.message


@pytest.mark.parametrize("extra,param", [
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"extra_body": {"ignore_eos": True}}, "ignore_eos"),
    ({"extra_body": {"functions": [{"name": "f"}]}}, "functions"),
    ({"messages": [{"role": "user", "content": [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}]},
     "messages[0].content[0].type"),
])
def test_what_anthropic_cannot_do_is_a_clear_400(gw: Rig, extra: dict[str, object],
                                                 param: str) -> None:
    kwargs: dict[str, object] = {"model": "claude", "messages": HELLO, **extra}
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai().chat.completions.create(**kwargs)  # type: ignore[call-overload]
    assert info.value.param == param
    assert info.value.code == "unsupported_parameter"
    assert "claude" in info.value.message and "anthropic" in info.value.message


def test_embeddings_cannot_go_to_a_messages_backend(gw: Rig) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai().embeddings.create(model="claude", input="hello")
    assert "chat completions only" in info.value.message
