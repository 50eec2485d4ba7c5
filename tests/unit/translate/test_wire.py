"""Which payload a backend is sent (gateway/translate/wire.py), chosen by the wire APIs it
serves and nothing else: no front door's API is special-cased on the way."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.translate.anthropic_request import JSON_MODE_KEY, split_messages_payload
from gateway.translate.messages_extensions import split_extensions
from gateway.translate.messages_request import to_chat_payload
from gateway.translate.wire import Outbound, choose_api, payload_in, routed_payload
from gateway.types import OPENAI_APIS, Backend, Endpoint, WireForms
from gateway.upstream import DispatchError

CLAUDE = Backend("claude", "anthropic", "http://c/v1", "claude-x", "external", 200_000, 4,
                 serves=frozenset({Endpoint.MESSAGES}))
O3 = Backend("o3", "openai", "http://o/v1", "o3", "external", 200_000, 4,
             serves=OPENAI_APIS | {Endpoint.RESPONSES})
GPT = Backend("gpt", "openai", "http://g/v1", "gpt-4.1", "external", 200_000, 4,
              takes_reasoning_effort=False)
LOCAL = Backend("local", "vllm", "http://l/v1", "llama", "self_hosted", 32_768, 2)

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64}
SIGNED = {"type": "thinking", "thinking": "t", "signature": "sig"}
THINKING = {"type": "enabled", "budget_tokens": 2048}


def sent(backend: Backend, endpoint: Endpoint, routed: dict[str, Any],
         forms: WireForms | None = None, *, as_sent: bool = True) -> tuple[Endpoint, Any]:
    outbound = choose_api(backend, endpoint, forms, as_sent=as_sent)
    assert isinstance(outbound, Outbound), outbound
    return outbound.api, payload_in(outbound, backend, endpoint, routed, forms)


def claude_request(**body: Any) -> tuple[dict[str, Any], WireForms | None]:
    """What the Messages front door routes, and what it keeps aside."""
    return split_extensions(to_chat_payload({
        "model": "m", "max_tokens": 4096, "thinking": THINKING, "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                SIGNED, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]}],
        **body}, "beta-1"))


def test_a_backend_that_serves_only_messages_gets_the_messages_payload() -> None:
    api, payload = sent(CLAUDE, Endpoint.CHAT, CHAT)
    body, json_mode, beta = split_messages_payload(payload)
    assert api is Endpoint.MESSAGES
    assert body == {"model": "claude-x", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}], "max_tokens": 64}
    assert json_mode is None and beta is None


def test_a_backend_that_serves_chat_gets_the_routed_payload_itself() -> None:
    for backend in (O3, GPT, LOCAL):
        assert sent(backend, Endpoint.CHAT, CHAT) == (Endpoint.CHAT, CHAT)
        assert sent(backend, Endpoint.CHAT, CHAT)[1] is CHAT  # no copy on the fast path


def test_json_mode_rides_in_the_messages_payload_for_its_reply_only() -> None:
    chat = {**CHAT, "response_format": {"type": "json_object"}}
    _, payload = sent(CLAUDE, Endpoint.CHAT, chat)
    body, json_mode, _ = split_messages_payload(payload)
    assert json_mode is not None and JSON_MODE_KEY not in body
    assert body["tool_choice"] == {"type": "tool", "name": json_mode.tool_name}


def test_a_claude_clients_extensions_stay_out_of_the_routed_payload() -> None:
    routed, forms = claude_request()
    assert forms is not None and forms.native is None
    assert not {"thinking", "anthropic_beta"} & set(routed)
    assert all("thinking_blocks" not in m for m in routed["messages"])


def test_a_claude_clients_extensions_reach_anthropic_as_sent() -> None:
    routed, forms = claude_request()
    api, payload = sent(CLAUDE, Endpoint.CHAT, routed, forms)
    body, _, beta = split_messages_payload(payload)
    assert api is Endpoint.MESSAGES and beta == "beta-1"
    assert body["thinking"] == THINKING
    assert body["messages"][1]["content"][0] == SIGNED


def test_for_the_openai_family_thinking_becomes_an_effort_where_the_model_takes_one() -> None:
    routed, forms = claude_request()
    _, reasoning = sent(O3, Endpoint.CHAT, routed, forms)
    _, plain = sent(GPT, Endpoint.CHAT, routed, forms)
    assert reasoning == {**routed, "reasoning_effort": "medium"}
    assert plain == routed
    assert list(reasoning) == [*routed, "reasoning_effort"]  # the order the body had


def test_a_redacted_copy_gets_the_extensions_back_message_for_message() -> None:
    routed, forms = claude_request()
    redacted = {**routed, "messages": [{**m, "content": "[REDACTED]"}
                                       if m["role"] == "user" else m
                                       for m in routed["messages"]]}
    _, payload = sent(CLAUDE, Endpoint.CHAT, redacted, forms, as_sent=False)
    body, _, _ = split_messages_payload(payload)
    assert body["messages"][0]["content"] == [{"type": "text", "text": "[REDACTED]"}]
    assert body["messages"][1]["content"][0] == SIGNED


def responses_forms(untranslatable: tuple[str, str] | None = None) -> WireForms:
    native = {"model": "m", "input": "hi", "tools": [{"type": "web_search"}]}
    return WireForms(native=(Endpoint.RESPONSES, native), untranslatable=untranslatable)


def test_a_backend_that_serves_the_clients_api_gets_its_body_as_sent() -> None:
    forms = responses_forms()
    outbound = choose_api(O3, Endpoint.CHAT, forms)
    assert outbound == Outbound(Endpoint.RESPONSES, as_sent=True)
    assert payload_in(outbound, O3, Endpoint.CHAT, CHAT, forms) is forms.native[1]  # type: ignore[index]
    assert outbound.reply_api(Endpoint.CHAT) is Endpoint.RESPONSES
    for backend in (GPT, LOCAL):  # the routed payload, answered in the routed API
        outbound = choose_api(backend, Endpoint.CHAT, forms)
        assert outbound == Outbound(Endpoint.CHAT)
        assert outbound.reply_api(Endpoint.CHAT) is Endpoint.CHAT
    api, _ = sent(CLAUDE, Endpoint.CHAT, CHAT, forms)
    assert api is Endpoint.MESSAGES


def test_a_route_that_redacts_sends_the_routed_payload_even_where_the_api_is_served() -> None:
    assert sent(O3, Endpoint.CHAT, CHAT, responses_forms(), as_sent=False) == (
        Endpoint.CHAT, CHAT)


def test_what_only_the_clients_api_carries_is_refused_by_the_others_so_failover_moves_on(
) -> None:
    forms = responses_forms(("tools[0]", "built-in tools run only at OpenAI"))
    assert choose_api(O3, Endpoint.CHAT, forms) == Outbound(Endpoint.RESPONSES, as_sent=True)
    for backend in (GPT, CLAUDE):
        refusal = choose_api(backend, Endpoint.CHAT, forms)
        assert isinstance(refusal, DispatchError) and refusal.retryable
        assert refusal.error.param == "tools[0]" and backend.name in refusal.error.message
    refusal = choose_api(O3, Endpoint.CHAT, forms, as_sent=False)
    assert isinstance(refusal, DispatchError) and refusal.retryable


def test_an_api_no_translation_reaches_is_refused_naming_what_the_backend_serves() -> None:
    refusal = choose_api(CLAUDE, Endpoint.COMPLETIONS, None)
    assert isinstance(refusal, DispatchError) and not refusal.retryable
    assert refusal.error.message == ("backend claude (anthropic) serves chat completions "
                                     "only, not /v1/completions")
    with pytest.raises(DispatchError):
        routed_payload(CLAUDE, Endpoint.EMBEDDINGS, {"input": "x"}, None)


def test_a_translation_the_backend_cannot_take_is_the_requests_fault() -> None:
    with pytest.raises(DispatchError) as refused:
        sent(CLAUDE, Endpoint.CHAT, {**CHAT, "n": 3})
    assert not refused.value.retryable and refused.value.error.param == "n"
