"""In-memory stand-ins for the routing service's seams (seams.py), and a service built on
them: no HTTP, no database, no Redis. The budget gate runs on the real in-memory store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.budget.limits import Reservation
from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.store import BudgetStore
from gateway.classify.payload_text import SpanScanner
from gateway.classify.redaction import RedactionMap
from gateway.policy.loader import parse_policy
from gateway.policy.runtime import PolicySet
from gateway.routing.budgeting import BudgetGate
from gateway.routing.limits import LimitsResolver
from gateway.routing.service import RoutingService
from gateway.scraper.fleet import Ticket
from gateway.types import (
    AffinityKind,
    AuditEvent,
    Backend,
    Endpoint,
    FleetSnapshot,
    Payload,
    Profile,
    RouteRequest,
    TenantContext,
    TenantDetector,
    Usage,
)
from gateway.upstream import DispatchError, UpstreamReply

# Two priced backends tried in order (priority): a first, b as its fallback. At $1 and $2
# per million tokens a prompt token costs 1 micro-USD and an output token 2.
POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: 'http://a/v1', model: m, context_window: 8192,
     price_per_mtok_usd: {input: 1, output: 2}}
  - {name: b, provider: vllm, base_url: 'http://b/v1', model: m, context_window: 8192,
     price_per_mtok_usd: {input: 1, output: 2}}
models:
  chat: {backends: [a, b], strategy: priority}
baseline: {name: frontier, price_per_mtok_usd: {input: 10, output: 10}}
tenants:
  acme: {}
  capped: {budget: {daily_tokens: 10}}
"""
PROMPT_TOKENS = 100
ACME = TenantContext("t-acme", "acme", "k1")
CAPPED = TenantContext("t-capped", "capped", "k2")


def request(*, stream: bool = False, request_id: str = "req-1",
            session_id: str | None = None) -> RouteRequest:
    return RouteRequest(request_id, Endpoint.CHAT, "chat",
                        {"model": "chat", "messages": [{"role": "user", "content": "hi"}]},
                        stream=stream, max_output_tokens=50, session_id=session_id)


@dataclass
class FixedPolicy:
    current: PolicySet

    def subscribe(self, listener: Callable[[PolicySet], None]) -> None:
        """A fixed policy never changes: nobody is ever called."""


class FixedClassifier:
    """Every request is PROMPT_TOKENS long and nothing in it is sensitive; a session is its
    prefix key."""

    can_redact = False

    async def profile(
        self, request: RouteRequest, thresholds: Sequence[int] = (), *,
        detectors: tuple[TenantDetector, ...] = (),
        other_encodings: Sequence[tuple[str, Sequence[int]]] = (),
        min_confidence: float = 0.0, **complexity: Any,
    ) -> Profile:
        key = b"s:" + request.session_id.encode() if request.session_id else None
        return Profile(PROMPT_TOKENS, request.max_output_tokens, affinity_key=key,
                       affinity_kind=AffinityKind.SESSION)

    def redaction_scanner(self, request: RouteRequest, detectors: tuple[TenantDetector, ...] = (),
                          profile: Profile | None = None) -> SpanScanner:
        raise AssertionError("nothing is sensitive: nothing is redacted")

    def redact(self, request: RouteRequest, detectors: tuple[TenantDetector, ...] = (),
               profile: Profile | None = None) -> tuple[Payload, RedactionMap]:
        raise AssertionError("nothing is sensitive: nothing is redacted")

    def redact_payload(self, request: RouteRequest,
                       scanner: SpanScanner) -> tuple[Payload, RedactionMap]:
        raise AssertionError("nothing is sensitive: nothing is redacted")

    def redact_text(self, text: str, scanner: SpanScanner) -> str:
        raise AssertionError("nothing is sensitive: nothing is redacted")


class RecordingFleet:
    """Remembers each attempt's life as (what, backend)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.prefix_keys: list[bytes | None] = []  # per dispatch
        self.holds: list[tuple[str, str]] = []  # ("hold" | "unhold", backend), apart

    def snapshot(self) -> FleetSnapshot:
        return FleetSnapshot()

    def hold(self, backend: str) -> None:
        self.holds.append(("hold", backend))

    def unhold(self, backend: str) -> None:
        self.holds.append(("unhold", backend))

    def dispatched(
        self, backend: str, prompt_tokens: int, kv_tokens: int, prefix_key: bytes | None = None
    ) -> Ticket:
        self.events.append(("dispatched", backend))
        self.prefix_keys.append(prefix_key)
        return Ticket(backend, 0.0, prompt_tokens, kv_tokens)

    def first_token(self, ticket: Ticket) -> None:
        self.events.append(("first_token", ticket.backend))

    def succeeded(self, ticket: Ticket, ttft_s: float | None, tpot_s: float | None) -> None:
        self.events.append(("succeeded", ticket.backend))

    def failed(self, ticket: Ticket) -> None:
        self.events.append(("failed", ticket.backend))

    def abandoned(self, ticket: Ticket) -> None:
        self.events.append(("abandoned", ticket.backend))


class AuditList:
    def __init__(self) -> None:
        self.events: list[AuditEvent] = []

    def record(self, event: AuditEvent) -> None:
        self.events.append(event)


def chunk(content: str) -> bytes:
    return b'{"choices":[{"index":0,"delta":{"content":"%s"}}]}' % content.encode()


USAGE_CHUNK = (b'{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,'
               b'"total_tokens":103}}')
REPLY = (b'{"choices":[{"index":0,"message":{"role":"assistant","content":"hello"}}],'
         b'"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}')


class ScriptedStream:
    def __init__(self, events: list[bytes], hold: asyncio.Event | None = None) -> None:
        self.first = events[0]
        self._rest = events[1:]
        self._hold = hold  # set: the rest of the stream waits for it
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self._rest:
            if self._hold is not None:
                await self._hold.wait()
            yield event

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class ScriptedProvider:
    """Per backend name: an error to raise, or else an answer. `hang`: that backend's call
    never returns (the client leaves first); `entered` is set once it is under way."""

    fail: dict[str, DispatchError] = field(default_factory=dict)
    hang: frozenset[str] = frozenset()
    stream_hold: asyncio.Event | None = None
    calls: list[str] = field(default_factory=list)
    streams: list[ScriptedStream] = field(default_factory=list)
    entered: asyncio.Event = field(default_factory=asyncio.Event)

    async def _call(self, backend: Backend) -> None:
        self.calls.append(backend.name)
        self.entered.set()
        if backend.name in self.hang:
            await asyncio.Event().wait()
        if backend.name in self.fail:
            raise self.fail[backend.name]

    async def complete(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                       request_id: str) -> UpstreamReply:
        await self._call(backend)
        return UpstreamReply(REPLY, Usage(100, 20))

    async def stream(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                     request_id: str) -> ScriptedStream:
        await self._call(backend)
        stream = ScriptedStream([chunk("he"), chunk("ll"), chunk("o"), USAGE_CHUNK],
                                self.stream_hold)
        self.streams.append(stream)
        return stream

    async def aclose(self) -> None:
        pass


class GatedSettle(MemoryBudgetStore):
    """Settling waits for `gate`: a stream's end is still in flight until it opens."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.settling = asyncio.Event()

    async def settle(self, reservation: Reservation, actual_micro_usd: int, actual_tokens: int,
                     requests_used: int | None = None) -> None:
        self.settling.set()
        await self.gate.wait()
        await super().settle(reservation, actual_micro_usd, actual_tokens, requests_used)


@dataclass
class Harness:
    service: RoutingService
    service_policy: FixedPolicy
    provider: ScriptedProvider
    fleet: RecordingFleet
    audit: AuditList
    store: BudgetStore


def harness(provider: ScriptedProvider | None = None,
            store: BudgetStore | None = None) -> Harness:
    provider = provider or ScriptedProvider()
    fleet, audit = RecordingFleet(), AuditList()
    store = store or MemoryBudgetStore()
    policy = FixedPolicy(parse_policy(POLICY))
    service = RoutingService(
        policy=policy,
        classifier=FixedClassifier(),
        fleet=fleet,
        budget=BudgetGate(store),
        limits=LimitsResolver(None),
        providers={"vllm": provider},
        audit=audit,
    )
    return Harness(service, policy, provider, fleet, audit, store)
