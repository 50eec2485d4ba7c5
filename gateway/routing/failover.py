"""Step 4, dispatch: the one failover loop, for whole replies and streams alike.

Candidates are tried in the decision's order until one answers; a retryable failure (5xx,
429, timeout, refused connection) moves on to the next, a non-retryable one (the request's
own fault) ends the request. A stream counts as answered once its first event arrived, so
failing over is only ever done before the client has seen a byte. Each attempt is reported
to the fleet (in flight, its circuit breaker and latency statistics) through `FleetAttempt`,
which shadow judging's calls go through too: a backend's load is everything sent to it. Each
backend is sent the request in a wire API it serves, as gateway/translate/wire.py picks it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar

from gateway.classify.redaction import RedactionMap
from gateway.policy.capacity import kv_need_tokens
from gateway.routing.seams import Classifier, FleetTracker
from gateway.routing.trace import NO_ATTEMPTS, Arrival, Attempts
from gateway.scraper.fleet import Ticket
from gateway.translate.wire import choose_api, payload_in
from gateway.types import Backend, Endpoint, Payload, Profile, RouteDecision, Zone
from gateway.upstream import DispatchError, Provider, UpstreamReply, UpstreamStream

R = TypeVar("R")
# One attempt: (provider, backend, endpoint, payload, request id) → a reply or an open stream.
Call = Callable[[Provider, Backend, Endpoint, Payload, str], Awaitable[R]]

# Above this many prompt tokens (~32K characters, a ~10 ms rescan) redaction leaves the loop.
REDACT_INLINE_TOKENS = 8_000


async def whole_reply(provider: Provider, backend: Backend, endpoint: Endpoint,
                      payload: Payload, request_id: str) -> UpstreamReply:
    return await provider.complete(backend, endpoint, payload, request_id)


async def open_stream(provider: Provider, backend: Backend, endpoint: Endpoint,
                      payload: Payload, request_id: str) -> UpstreamStream:
    return await provider.stream(backend, endpoint, payload, request_id)


class FleetAttempt:
    """One call to one backend, as the fleet accounts for it: in flight (its prompt queued
    for prefill, its KV claimed) from construction; on leaving the `with` block by an error,
    failed when the error is a retryable DispatchError (the backend's fault: its circuit
    breaker counts it), else abandoned (the request's own fault, or nobody waiting any more).
    Success is the caller's to report, with what it measured: a whole reply at once, a stream
    when it ends."""

    __slots__ = ("_fleet", "ticket")

    def __init__(self, fleet: FleetTracker, backend: Backend, profile: Profile) -> None:
        self._fleet = fleet
        self.ticket = fleet.dispatched(
            backend.name, profile.prompt_tokens,
            kv_need_tokens(profile.prompt_tokens, profile.max_output_tokens),
            profile.affinity_key,
        )

    def __enter__(self) -> Ticket:
        return self.ticket

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if error is None:
            return
        if isinstance(error, DispatchError) and error.retryable:
            self._fleet.failed(self.ticket)
        else:
            self._fleet.abandoned(self.ticket)


@dataclass(frozen=True, slots=True)
class Delivered(Generic[R]):
    """A candidate answered: its reply (or open stream), the API that speaks, and the
    placeholders to restore in it (None: it saw the original request)."""

    attempts: Attempts
    result: R
    endpoint: Endpoint
    mapping: RedactionMap | None


class Undelivered(Exception):
    """No candidate answered. `cause`: the error the client gets (the last retryable
    failure, or the first that was not retryable), or whatever interrupted the loop
    (the client leaving: CancelledError). `attempts`: what was tried, for the record."""

    def __init__(self, attempts: Attempts, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.attempts = attempts
        self.cause = cause


class Failover:
    def __init__(self, providers: Mapping[str, Provider], fleet: FleetTracker,
                 classifier: Classifier) -> None:
        self._providers = providers
        self._fleet = fleet
        self._classifier = classifier

    async def deliver(self, arrival: Arrival, profile: Profile, decision: RouteDecision,
                      call: Call[R]) -> Delivered[R]:
        """The first candidate's answer that arrives; raises Undelivered otherwise."""
        request, fleet = arrival.request, self._fleet
        attempts = NO_ATTEMPTS
        last: DispatchError | None = None
        redacted: tuple[Payload, RedactionMap] | None = None  # computed once, reused
        try:
            for backend in decision.candidates:
                # Redaction rewrites the routed payload: the client's own body cannot go.
                redacts = decision.redact and backend.zone != Zone.SELF_HOSTED
                outbound = choose_api(backend, request.endpoint, request.forms,
                                      as_sent=not redacts)
                if isinstance(outbound, DispatchError):
                    if not outbound.retryable:
                        raise outbound
                    last = outbound
                    continue
                routed, mapping = request.payload, None
                if redacts:
                    if redacted is None:
                        redacted = await self._redact(arrival, profile)
                    routed, mapping = redacted
                try:
                    with FleetAttempt(fleet, backend, profile) as ticket:
                        attempts = attempts.sent(backend, ticket, mapping is not None)
                        payload = payload_in(outbound, backend, request.endpoint, routed,
                                             request.forms)
                        result = await call(
                            arrival.spans.call(self._providers[backend.provider]),
                            backend, outbound.api, payload, request.request_id)
                except DispatchError as exc:
                    if not exc.retryable:
                        raise  # the request's fault, not the backend's: no other candidate
                    attempts = attempts.failed(f"{backend.name}: {failure_reason(exc)}")
                    last = exc
                    continue
                return Delivered(attempts, result, outbound.reply_api(request.endpoint),
                                 mapping)
        except DispatchError as exc:
            raise Undelivered(attempts, exc.error) from None
        except BaseException as exc:
            raise Undelivered(attempts, exc) from None
        assert last is not None
        raise Undelivered(attempts, last.error)

    async def _redact(self, arrival: Arrival, profile: Profile) -> tuple[Payload, RedactionMap]:
        """What a backend outside self_hosted may see: placeholders for every sensitive span.
        A long prompt's rescan (~0.3 µs a character) runs in a thread, so the loop keeps
        serving."""
        redact, request = self._classifier.redact, arrival.request
        detectors = arrival.plan.tenant.detectors
        if profile.prompt_tokens > REDACT_INLINE_TOKENS:
            return await asyncio.to_thread(redact, request, detectors, profile)
        return redact(request, detectors, profile)


def failure_reason(exc: DispatchError) -> str:
    """What the audit trace says of a failed attempt: the upstream's status, else the transport
    failure's kind ("ServerDisconnectedError", "ConnectionTimeoutError"). Never the message:
    an upstream's error text may quote the request it refused."""
    if exc.upstream_status is not None:
        return f"HTTP {exc.upstream_status}"
    cause = exc.__cause__
    return type(cause).__name__ if cause is not None else exc.error.error_type
