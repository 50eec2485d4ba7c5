"""The one orchestrator of a request: classify → decide → reserve → dispatch → settle → record.

Everything else is a collaborator handed in by the composition root; this module only says
in what order things happen and what happens when one of them fails.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass

from gateway.audit.writer import AuditWriter
from gateway.budget.limits import Reservation
from gateway.budget.pricing import cost_micro_usd, effective_price, format_usd
from gateway.classify.complexity import DEFAULT_THRESHOLDS
from gateway.classify.profiler import RequestClassifier
from gateway.classify.redaction import RedactionMap
from gateway.classify.router_registry import FittedRouters
from gateway.errors import GatewayError, InternalError
from gateway.policy.capacity import kv_need_tokens
from gateway.policy.engine import decide
from gateway.policy.store import PolicyStore
from gateway.routing.audit_labels import audit_labels
from gateway.routing.budgeting import BudgetGate, worst_case
from gateway.routing.content_capture import capture
from gateway.routing.engine_counts import EngineCounter, with_engine_counts
from gateway.routing.limits import LimitsResolver
from gateway.routing.redaction_relay import RestoringStream, restore_body
from gateway.routing.responses_dispatch import cannot_serve, passes_through
from gateway.routing.streaming import Relay, StreamOutcome
from gateway.routing.trace import RequestTrace, audit_event, response_headers
from gateway.scraper.fleet import FleetState, Ticket
from gateway.scraper.latency import split_latency
from gateway.telemetry.tracing import Tracing
from gateway.types import (
    Backend,
    Endpoint,
    Payload,
    PricePerMTok,
    Profile,
    RouteRequest,
    TenantContext,
    Usage,
    Zone,
)
from gateway.upstream import DispatchError, Provider, UpstreamReply, UpstreamStream

# Above this many prompt tokens (~32K characters, a ~10 ms rescan) redaction leaves the loop.
REDACT_INLINE_TOKENS = 8_000


@dataclass(slots=True)
class Completed:
    body: bytes
    content_type: str
    headers: dict[str, str]
    endpoint: Endpoint = Endpoint.CHAT  # the API the body speaks (RESPONSES: passed through)


@dataclass(slots=True)
class Streaming:
    body: Relay
    headers: dict[str, str]
    endpoint: Endpoint = Endpoint.CHAT


class RoutingService:
    def __init__(
        self,
        *,
        policy: PolicyStore,
        classifier: RequestClassifier,
        fleet: FleetState,
        budget: BudgetGate,
        limits: LimitsResolver,
        providers: Mapping[str, Provider],
        audit: AuditWriter,
        tracing: Tracing | None = None,
        engine_counter: EngineCounter | None = None,
        routers: FittedRouters | None = None,
    ) -> None:
        self._policy = policy
        self._classifier = classifier
        # The policy's `router:` directories, loaded now and again with each reload.
        self._routers = routers or FittedRouters()
        self._routers.refresh(policy.current.routers.directories())
        policy.subscribe(lambda new: self._routers.refresh(new.routers.directories()))
        self._fleet = fleet
        self._budget = budget
        self._limits = limits
        self._providers = providers
        self._audit = audit
        self._finishing: set[asyncio.Task[int]] = set()  # stream ends outliving their client
        self._tracing = tracing or Tracing()  # off unless the composition root traces
        self._engine_counter = engine_counter  # backends' own counts, where the policy allows
        self._rotation = itertools.count()

    async def handle(self, tenant: TenantContext, request: RouteRequest,
                     headers: Mapping[str, str] | None = None) -> Completed | Streaming:
        spans = self._tracing.begin(tenant, request, headers)  # continues the client's trace
        trace = RequestTrace(time.perf_counter(), spans=spans)
        reservation: Reservation | None = None
        policy = self._policy.current  # one policy for the whole request, even across a reload
        trace.detectors = policy.tenant_detectors(tenant.tenant_name)
        router = self._routers.get(policy.routers.choose(tenant.tenant_name, request.model))
        profile = trace.spans.classified(await self._classifier.profile(  # 1 classify
            request, policy.token_thresholds(request.model, request.max_output_tokens),
            detectors=trace.detectors,
            other_encodings=policy.other_encodings(request.model, request.max_output_tokens),
            min_confidence=policy.min_confidence(tenant.tenant_name),
            complexity_model=router,
            complexity_thresholds=router.thresholds if router else DEFAULT_THRESHOLDS,
        ))
        profile = await with_engine_counts(profile, request, policy, self._engine_counter)
        try:
            scopes = await self._limits.scopes(policy, tenant, request.tags)
            spec = policy.tenant_specs.get(tenant.tenant_name)
            trace.capture = spec is not None and spec.store_content != "none"
            trace.snapshot = self._fleet.snapshot()
            trace.over_soft_limit = self._budget.over_soft_limit(tenant.tenant_id)
            decision = decide(  # 2 decide
                request, profile, tenant, trace.snapshot, policy, next(self._rotation),
                trace.over_soft_limit,
            )
            trace.decision = trace.spans.decided(decision)
            admitted = trace.spans.reserved(await self._budget.admit(  # 3 reserve
                policy, tenant, request.request_id, scopes, *worst_case(profile, decision)
            ))
            reservation, trace.headers = admitted.reservation, admitted.headers
            trace.unmetered = reservation is None
            if request.stream:
                return await self._open_stream(tenant, request, profile, reservation, trace)
            endpoint, reply = await self._dispatch(request, profile, trace)  # 4 dispatch
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
            tenant, request, profile, reservation, trace, reply.usage, body=reply.body
        )
        return Completed(reply.body, reply.content_type, response_headers(trace, profile, cost),
                         endpoint)

    async def _dispatch(
        self, request: RouteRequest, profile: Profile, trace: RequestTrace
    ) -> tuple[Endpoint, UpstreamReply]:
        assert trace.decision is not None
        last: DispatchError | None = None
        for backend in trace.decision.candidates:
            refusal = cannot_serve(request, trace, backend)
            if refusal is not None:
                last = refusal
                continue
            endpoint, payload, mapping = await self._payload_for(
                request, profile, trace, backend)
            ticket = self._attempt(backend, profile, trace)
            try:
                reply = await trace.spans.call(self._providers[backend.provider]).complete(
                    backend, endpoint, payload, request.request_id
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
            return endpoint, reply
        assert last is not None
        raise last.error

    async def _open_stream(
        self,
        tenant: TenantContext,
        request: RouteRequest,
        profile: Profile,
        reservation: Reservation,
        trace: RequestTrace,
    ) -> Streaming:
        assert trace.decision is not None
        last: DispatchError | None = None
        stream: UpstreamStream | None = None
        ticket: Ticket | None = None
        endpoint = request.endpoint
        for backend in trace.decision.candidates:
            refusal = cannot_serve(request, trace, backend)
            if refusal is not None:
                last = refusal
                continue
            endpoint, payload, mapping = await self._payload_for(
                request, profile, trace, backend)
            ticket = self._attempt(backend, profile, trace)
            try:
                stream = await trace.spans.call(self._providers[backend.provider]).stream(
                    backend, endpoint, payload, request.request_id
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
            # A client that hangs up at [DONE] cancels the body's task: settling and the
            # audit record run in their own task, so they finish anyway.
            finishing = asyncio.create_task(self._finish(
                tenant, request, profile, reservation, trace,
                # No usage chunk: the prompt estimate and one token per content event.
                outcome.usage or Usage(profile.prompt_tokens, max(0, outcome.events - 1)),
                error=outcome.error, cancelled=outcome.cancelled,
                ttft_s=(outcome.first_token_at_s - trace.started_s)
                if outcome.first_token_at_s is not None else None,
                events=outcome.captured,
            ))
            self._finishing.add(finishing)
            finishing.add_done_callback(self._finishing.discard)
            await asyncio.shield(finishing)

        def annotate(usage: Usage) -> dict[str, str]:
            cost = cost_micro_usd(usage, self._price(attempt_backend))
            return {"cost_usd": format_usd(cost), "backend": attempt_backend.name}

        attempt_backend = trace.backend
        assert attempt_backend is not None
        body = Relay(stream, include_usage=request.include_usage, on_finish=on_finish,
                     on_first_token=on_first_token, annotate_usage=annotate,
                     capture=trace.capture)
        return Streaming(body, response_headers(trace, profile, None), endpoint)

    async def _payload_for(
        self, request: RouteRequest, profile: Profile, trace: RequestTrace, backend: Backend
    ) -> tuple[Endpoint, Payload, RedactionMap | None]:
        """What this backend may see: the original inside self_hosted, placeholders outside
        it when the route redacts (computed once, reused across fallbacks). A long prompt's
        rescan (~0.3 µs a character) runs in a thread, so the loop keeps serving. A
        Responses request goes as such to a backend that serves it natively, unless it
        must be redacted (redaction rewrites the chat translation, which then goes)."""
        if passes_through(request, trace, backend):
            assert request.responses_payload is not None
            return Endpoint.RESPONSES, request.responses_payload, None
        decision = trace.decision
        if decision is None or not decision.redact or backend.zone == Zone.SELF_HOSTED:
            return request.endpoint, request.payload, None
        if trace.redacted is None:
            redact = self._classifier.redact
            trace.redacted = (
                await asyncio.to_thread(redact, request, trace.detectors, profile)
                if profile.prompt_tokens > REDACT_INLINE_TOKENS
                else redact(request, trace.detectors, profile)
            )
        return (request.endpoint, *trace.redacted)

    def _attempt(self, backend: Backend, profile: Profile, trace: RequestTrace) -> Ticket:
        trace.attempts += 1
        trace.backend = backend
        trace.tried.append(backend.name)
        trace.attempt_started_s = time.perf_counter()
        return self._fleet.dispatched(
            backend.name, profile.prompt_tokens,
            kv_need_tokens(profile.prompt_tokens, profile.max_output_tokens),
        )

    def _failed(self, ticket: Ticket, exc: DispatchError, trace: RequestTrace) -> DispatchError:
        if not exc.retryable:
            self._fleet.abandoned(ticket)  # the request's fault, not the backend's
            raise exc.error
        self._fleet.failed(ticket)
        trace.errors.append(f"{ticket.backend}: {exc.error.message}")
        return exc

    def _measure(self, ticket: Ticket, trace: RequestTrace, outcome: StreamOutcome) -> None:
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
        trace: RequestTrace,
        usage: Usage | None,
        *,
        error: GatewayError | None = None,
        cancelled: bool = False,
        ttft_s: float | None = None,
        body: bytes | None = None,
        events: list[bytes] | None = None,
    ) -> int:
        trace.spans.settling()
        backend = trace.backend
        usage = usage or Usage()
        cost = cost_micro_usd(usage, self._price(backend)) if backend else 0
        if reservation is not None:
            await self._budget.settle(reservation, cost, usage.total_tokens)
        policy = self._policy.current
        baseline = policy.baseline
        labels = audit_labels(self._classifier, policy, tenant.tenant_name, request,
                              trace.detectors)
        content = (
            await capture(self._classifier, request, profile, body, events, trace.detectors)
            if trace.capture and backend is not None else None
        )
        self._audit.record(audit_event(
            tenant, request, profile, trace, usage, cost, error=error, cancelled=cancelled,
            ttft_s=ttft_s,
            baseline_cost_micro_usd=(
                cost_micro_usd(usage, baseline.price) if baseline is not None else None
            ),
            content=content,
            labels=labels,
        ))
        return trace.spans.settled(backend, usage, cost, error, cancelled, ttft_s)

    def _price(self, backend: Backend) -> PricePerMTok | None:
        """What a request on this backend costs: self-hosted at the GPUs' measured effective
        price once there is enough throughput to measure, else the policy's price."""
        if backend.gpu_hourly_usd is not None:
            state = self._fleet.snapshot().backends.get(backend.name)
            measured = effective_price(backend, state.tokens_per_hour if state else None)
            if measured is not None:
                return measured
        return backend.price
