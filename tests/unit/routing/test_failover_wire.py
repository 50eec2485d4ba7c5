"""The failover loop sends each candidate the request in an API it serves, picked the same
way for every front door: a Messages-only backend gets a Messages payload, a chat backend
the routed payload, a backend serving the client's own API its body as sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from gateway.errors import UpstreamFailed
from gateway.policy.loader import parse_policy
from gateway.routing.failover import Failover, Undelivered, whole_reply
from gateway.routing.trace import Arrival
from gateway.translate.messages_extensions import split_extensions
from gateway.translate.messages_request import to_chat_payload
from gateway.types import (
    OPENAI_APIS,
    Backend,
    Endpoint,
    Payload,
    Profile,
    RouteDecision,
    RouteRequest,
    Usage,
    WireForms,
)
from gateway.upstream import DispatchError, UpstreamReply
from tests.unit.routing.service_fakes import ACME, POLICY, FixedClassifier, RecordingFleet

CLAUDE = Backend("claude", "anthropic", "http://c/v1", "claude-x", "external", 200_000, 4,
                 serves=frozenset({Endpoint.MESSAGES}))
O3 = Backend("o3", "openai", "http://o/v1", "o3", "external", 200_000, 4,
             serves=OPENAI_APIS | {Endpoint.RESPONSES})
GPT = Backend("gpt", "openai", "http://g/v1", "gpt-4.1", "external", 200_000, 4,
              takes_reasoning_effort=False)
CHAT = {"model": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64}


@dataclass
class Recording:
    """Answers as the last backend tried; the others are unavailable."""

    answering: str
    sent: list[tuple[str, Endpoint, Payload]] = field(default_factory=list)

    async def complete(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                       request_id: str) -> UpstreamReply:
        self.sent.append((backend.name, endpoint, payload))
        if backend.name != self.answering:
            raise DispatchError(UpstreamFailed("busy"), retryable=True, upstream_status=503)
        return UpstreamReply(b"{}", Usage())

    async def stream(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                     request_id: str) -> Any:
        raise AssertionError("whole replies only")

    async def aclose(self) -> None:
        pass


async def deliver(request: RouteRequest, *candidates: Backend) -> tuple[Recording, Any]:
    provider = Recording(candidates[-1].name)
    failover = Failover({"anthropic": provider, "openai": provider}, RecordingFleet(),
                        FixedClassifier())
    arrival = Arrival(ACME, request, parse_policy(POLICY).for_request(ACME, request), 0.0)
    decision = RouteDecision(candidates[0], candidates[1:], "r")
    delivered = await failover.deliver(arrival, Profile(10, 64), decision, whole_reply)
    return provider, delivered


def chat_request(payload: Payload, forms: WireForms | None = None,
                 endpoint: Endpoint = Endpoint.CHAT) -> RouteRequest:
    return RouteRequest("r1", endpoint, "chat", payload, max_output_tokens=64, forms=forms)


async def test_a_messages_only_backend_gets_messages_and_its_fallback_the_chat_payload(
) -> None:
    provider, delivered = await deliver(chat_request(CHAT), CLAUDE, GPT)
    (first, api, messages), (second, chat_api, chat) = provider.sent
    assert (first, api, second, chat_api) == ("claude", Endpoint.MESSAGES, "gpt", Endpoint.CHAT)
    assert messages["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert chat is CHAT
    assert delivered.endpoint is Endpoint.CHAT  # every provider answers a translation in chat


async def test_a_claude_clients_thinking_goes_to_each_backend_in_its_own_terms() -> None:
    routed, forms = split_extensions(to_chat_payload({
        "model": "chat", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "enabled", "budget_tokens": 4096}}))
    provider, _ = await deliver(chat_request(routed, forms), CLAUDE, O3)
    (_, _, messages), (_, _, chat) = provider.sent
    assert messages["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert chat["reasoning_effort"] == "high" and "thinking" not in chat
    assert "thinking" not in routed


async def test_a_responses_request_passes_through_where_served_after_a_refusal_elsewhere(
) -> None:
    native = {"model": "chat", "input": "hi", "tools": [{"type": "web_search"}]}
    forms = WireForms(native=(Endpoint.RESPONSES, native),
                      untranslatable=("tools[0]", "built-in tools run at OpenAI only"))
    provider, delivered = await deliver(chat_request(CHAT, forms), GPT, CLAUDE, O3)
    assert provider.sent == [("o3", Endpoint.RESPONSES, native)]  # the others never called
    assert delivered.endpoint is Endpoint.RESPONSES
    assert delivered.attempts.backend is O3


async def test_an_endpoint_a_backend_cannot_be_sent_in_ends_the_request() -> None:
    request = chat_request({"model": "chat", "prompt": "hi"}, endpoint=Endpoint.COMPLETIONS)
    with pytest.raises(Undelivered) as undelivered:
        await deliver(request, CLAUDE, GPT)
    assert undelivered.value.cause.error_type == "invalid_request_error"  # type: ignore[attr-defined]
    assert "serves chat completions only" in str(undelivered.value.cause)
