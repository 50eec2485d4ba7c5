"""The one orchestrator of a request: classify → decide → reserve → dispatch → settle → record.

Everything else is a collaborator handed in by the composition root; this module only says
in what order things happen and what happens when one of them fails.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.audit.writer import AuditWriter
from gateway.budget.pricing import cost_micro_usd, format_usd
from gateway.budget.store import BudgetStore, Reservation
from gateway.classify.profiler import RequestClassifier
from gateway.classify.redaction import RedactionMap
from gateway.errors import GatewayError, InternalError
from gateway.policy.capacity import kv_need_tokens
from gateway.policy.engine import decide
from gateway.policy.store import PolicyStore
from gateway.providers.base import DispatchError, Provider, UpstreamReply, UpstreamStream
from gateway.routing.redaction_relay import RestoringStream, restore_body
from gateway.routing.streaming import Relay, StreamOutcome
from gateway.scraper.fleet import FleetState, Ticket
from gateway.scraper.latency import split_latency
from gateway.types import (
    AuditEvent,
    Backend,
    Payload,
    Profile,
    RouteDecision,
    RouteRequest,
    TenantContext,
    Usage,
    Zone,
)

# Worst case reserved when the client sets no max_tokens (settled to the actual afterwards).
DEFAULT_RESERVE_OUTPUT_TOKENS = 4096


@dataclass(slots=True)
class Completed:
    body: bytes
    content_type: str
    headers: dict[str, str]


@dataclass(slots=True)
class Streaming:
    body: Relay
    headers: dict[str, str]


@dataclass(slots=True)
class _Trace:
    """What the request path learned, for the audit record."""

    started_s: float
    decision: RouteDecision | None = None
    backend: Backend | None = None
    attempts: int = 0
    attempt_started_s: float = 0.0  # when the attempt that answered was sent
    errors: list[str] = field(default_factory=list)
    redacted: tuple[Payload, RedactionMap] | None = None


class RoutingService:
    def __init__(
        self,
        *,
        policy: PolicyStore,
        classifier: RequestClassifier,
        fleet: FleetState,
        budget: BudgetStore,
        providers: Mapping[str, Provider],
        audit: AuditWriter,
    ) -> None:
        self._policy = policy
        self._classifier = classifier
        self._fleet = fleet
        self._budget = budget
        self._providers = providers
        self._audit = audit
        self._rotation = itertools.count()

    async def handle(self, tenant: TenantContext, request: RouteRequest) -> Completed | Streaming:
        trace = _Trace(started_s=time.perf_counter())
        reservation: Reservation | None = None
        policy = self._policy.current  # one policy for the whole request, even across a reload
        profile = await self._classifier.profile(  # 1 classify
            request, policy.token_thresholds(request.model, request.max_output_tokens)
        )
        try:
            decision = decide(  # 2 decide
                request, profile, tenant, self._fleet.snapshot(), policy, next(self._rotation)
            )
            trace.decision = decision
            reservation = await self._budget.reserve(  # 3 reserve
                request.request_id, tenant.tenant_id, _worst_case(profile, decision.primary)
            )
            if request.stream:
                return await self._open_stream(tenant, request, profile, reservation, trace)
            reply = await self._dispatch(request, profile, trace)  # 4 dispatch
        except BaseException as exc:
            error = exc if isinstance(exc, GatewayError) else None
            if error is None and isinstance(exc, Exception):
                error = InternalError("internal error while routing the request")
            await self._finish(tenant, request, profile, reservation, trace, None,
                               error=error, cancelled=error is None)
            if error is not None and error is not exc:
                raise error from exc
            raise
        assert trace.backend is not None
        cost = await self._finish(  # 5 settle + 6 record
            tenant, request, profile, reservation, trace, reply.usage
        )
        return Completed(reply.body, reply.content_type, self._headers(trace, cost))

    async def _dispatch(
        self, request: RouteRequest, profile: Profile, trace: _Trace
    ) -> UpstreamReply:
        assert trace.decision is not None
        last: DispatchError | None = None
        for backend in trace.decision.candidates:
            payload, mapping = self._payload_for(request, trace, backend)
            ticket = self._attempt(backend, profile, trace)
            try:
                reply = await self._providers[backend.provider].complete(
                    backend, request.endpoint, payload, request.request_id
                )
            except DispatchError as exc:
                last = self._failed(ticket, exc, trace)
                continue
            except BaseException:
                self._fleet.abandoned(ticket)  # the client left: no verdict on the backend
                raise
            self._fleet.succeeded(ticket, None, None)  # a whole reply has no TTFT to measure
            if mapping is not None:
                reply.body = restore_body(reply.body, mapping)
            return reply
        assert last is not None
        raise last.error

    async def _open_stream(
        self,
        tenant: TenantContext,
        request: RouteRequest,
        profile: Profile,
        reservation: Reservation,
        trace: _Trace,
    ) -> Streaming:
        assert trace.decision is not None
        last: DispatchError | None = None
        stream: UpstreamStream | None = None
        ticket: Ticket | None = None
        for backend in trace.decision.candidates:
            payload, mapping = self._payload_for(request, trace, backend)
            ticket = self._attempt(backend, profile, trace)
            try:
                stream = await self._providers[backend.provider].stream(
                    backend, request.endpoint, payload, request.request_id
                )
            except DispatchError as exc:
                last = self._failed(ticket, exc, trace)
                continue
            except BaseException:
                self._fleet.abandoned(ticket)
                raise
            if mapping is not None:
                stream = RestoringStream(stream, mapping)
            break
        if stream is None or ticket is None:
            assert last is not None
            raise last.error
        attempt = ticket
        fleet = self._fleet

        def on_first_token() -> None:
            fleet.first_token(attempt)

        async def on_finish(outcome: StreamOutcome) -> None:
            self._measure(attempt, trace, outcome)
            await self._finish(
                tenant, request, profile, reservation, trace,
                outcome.usage or _partial_usage(profile, outcome),
                error=outcome.error, cancelled=outcome.cancelled,
                ttft_s=(outcome.first_token_at_s - trace.started_s)
                if outcome.first_token_at_s is not None else None,
            )

        body = Relay(stream, include_usage=request.include_usage, on_finish=on_finish,
                     on_first_token=on_first_token)
        return Streaming(body, self._headers(trace, None))

    def _payload_for(
        self, request: RouteRequest, trace: _Trace, backend: Backend
    ) -> tuple[Payload, RedactionMap | None]:
        """What this backend may see: the original inside self_hosted, placeholders outside
        it when the route redacts (computed once, reused across fallbacks)."""
        decision = trace.decision
        if decision is None or not decision.redact or backend.zone == Zone.SELF_HOSTED:
            return request.payload, None
        if trace.redacted is None:
            trace.redacted = self._classifier.redact(request)
        return trace.redacted

    def _attempt(self, backend: Backend, profile: Profile, trace: _Trace) -> Ticket:
        trace.attempts += 1
        trace.backend = backend
        trace.attempt_started_s = time.perf_counter()
        return self._fleet.dispatched(
            backend.name, profile.prompt_tokens,
            kv_need_tokens(profile.prompt_tokens, profile.max_output_tokens),
        )

    def _failed(self, ticket: Ticket, exc: DispatchError, trace: _Trace) -> DispatchError:
        if not exc.retryable:
            self._fleet.abandoned(ticket)  # the request's fault, not the backend's
            raise exc.error
        self._fleet.failed(ticket)
        trace.errors.append(f"{ticket.backend}: {exc.error.message}")
        return exc

    def _measure(self, ticket: Ticket, trace: _Trace, outcome: StreamOutcome) -> None:
        """The backend's own TTFT and time per token: from this attempt's send, not from
        when the client's request arrived (classification and failed attempts excluded)."""
        if outcome.cancelled:
            self._fleet.abandoned(ticket)
            return
        if outcome.error is not None:
            self._fleet.failed(ticket)
            return
        ttft = None
        if outcome.first_token_at_s is not None:
            ttft = outcome.first_token_at_s - trace.attempt_started_s
        total = time.perf_counter() - trace.attempt_started_s
        tokens = outcome.usage.completion_tokens if outcome.usage else outcome.events
        self._fleet.succeeded(ticket, ttft, split_latency(ttft, total, tokens))

    async def _finish(
        self,
        tenant: TenantContext,
        request: RouteRequest,
        profile: Profile,
        reservation: Reservation | None,
        trace: _Trace,
        usage: Usage | None,
        *,
        error: GatewayError | None = None,
        cancelled: bool = False,
        ttft_s: float | None = None,
    ) -> int:
        backend = trace.backend
        usage = usage or Usage()
        cost = cost_micro_usd(usage, backend.price if backend else None)
        if reservation is not None:
            await self._budget.settle(reservation, cost)
        if cancelled:
            status, outcome = 499, "client_disconnected"
        elif error is not None:
            status, outcome = error.status, "error"
        else:
            status, outcome = 200, "ok"
        decision = trace.decision
        self._audit.record(
            AuditEvent(
                request_id=request.request_id,
                ts_unix_s=time.time(),
                tenant_id=tenant.tenant_id,
                key_id=tenant.key_id,
                endpoint=request.endpoint.value,
                requested_model=request.model,
                backend=backend.name if backend else None,
                upstream_model=backend.model if backend else None,
                rule=decision.rule if decision else None,
                status=status,
                error_type=error.error_type if error else None,
                prompt_tokens=usage.prompt_tokens or (profile.prompt_tokens if error else 0),
                completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens,
                cost_micro_usd=cost,
                duration_s=time.perf_counter() - trace.started_s,
                ttft_s=ttft_s,
                attempts=trace.attempts,
                stream=request.stream,
                outcome=outcome,
                rejected=decision.rejected if decision else (),
            )
        )
        return cost

    @staticmethod
    def _headers(trace: _Trace, cost_micro_usd: int | None) -> dict[str, str]:
        assert trace.backend is not None and trace.decision is not None
        headers = {
            "x-gateway-backend": trace.backend.name,
            "x-gateway-rule": trace.decision.rule,
            "x-gateway-attempts": str(trace.attempts),
        }
        if cost_micro_usd is not None:
            headers["x-gateway-cost-usd"] = format_usd(cost_micro_usd)
        return headers


def _worst_case(profile: Profile, backend: Backend) -> int:
    output = profile.max_output_tokens or DEFAULT_RESERVE_OUTPUT_TOKENS
    return cost_micro_usd(Usage(profile.prompt_tokens, output), backend.price)


def _partial_usage(profile: Profile, outcome: StreamOutcome) -> Usage:
    """A stream that ended without a usage chunk: the prompt estimate and one token per event."""
    return Usage(prompt_tokens=profile.prompt_tokens, completion_tokens=max(0, outcome.events - 1))
