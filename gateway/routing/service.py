"""The one orchestrator of a request: classify → decide → reserve → dispatch → settle → record.

Everything else is a collaborator handed in by the composition root; this module only says
in what order things happen and what happens when one of them fails. Each step returns an
immutable value (Profile, Route, Admitted, Attempts) and settling and recording take one
(`Finished`); the policy is looked up once (`RequestPolicy`) and carried to the end.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from gateway.budget.pricing import cost_micro_usd, effective_price, format_usd
from gateway.classify.router_registry import FittedRouters
from gateway.errors import GatewayError, InternalError
from gateway.routing.audit_labels import audit_labels
from gateway.routing.budgeting import Admitted, BudgetGate, worst_case_of
from gateway.routing.content_capture import capture
from gateway.routing.engine_counts import EngineCounter
from gateway.routing.failover import Failover, Undelivered, open_stream, whole_reply
from gateway.routing.limits import LimitsResolver
from gateway.routing.pipeline import RoutePipeline
from gateway.routing.redaction_relay import RestoringStream, restore_body
from gateway.routing.seams import AuditSink, Classifier, FleetTracker, PolicySource
from gateway.routing.shadow import ShadowJudge
from gateway.routing.streaming import Relay, StreamOutcome
from gateway.routing.trace import (
    NO_ATTEMPTS,
    Arrival,
    Attempts,
    Finished,
    Route,
    Settlement,
    audit_event,
    response_headers,
)
from gateway.scraper.latency import split_latency
from gateway.telemetry.tracing import Tracing
from gateway.types import (
    Backend,
    Endpoint,
    PricePerMTok,
    Profile,
    RouteRequest,
    ScopeLimits,
    TenantContext,
    Usage,
)
from gateway.upstream import Provider

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Completed:
    body: bytes
    content_type: str
    headers: dict[str, str]
    # The API the body speaks: the routed one, or the client's own where its body went as
    # sent (RESPONSES: passed through).
    endpoint: Endpoint = Endpoint.CHAT


@dataclass(slots=True)
class Streaming:
    body: Relay
    headers: dict[str, str]
    endpoint: Endpoint = Endpoint.CHAT


class RoutingService:
    def __init__(
        self,
        *,
        policy: PolicySource,
        classifier: Classifier,
        fleet: FleetTracker,
        budget: BudgetGate,
        limits: LimitsResolver,
        providers: Mapping[str, Provider],
        audit: AuditSink,
        tracing: Tracing | None = None,
        engine_counter: EngineCounter | None = None,
        shadow: ShadowJudge | None = None,
        routers: FittedRouters | None = None,
    ) -> None:
        self._policy = policy
        self._classifier = classifier
        # The policy's `router:` directories, loaded now and again with each reload.
        routers = routers or FittedRouters()
        routers.refresh(policy.current.routers.directories())
        policy.subscribe(lambda new: routers.refresh(new.routers.directories()))
        # Steps 1 to 2, shared with explain (`pipeline`): engines count a prompt themselves
        # where the policy allows, and rules read the budget gate's soft-limit flag.
        self.pipeline = RoutePipeline(classifier, fleet, budget, engine_counter, routers)
        self._fleet = fleet
        self._budget = budget
        self._limits = limits
        self._audit = audit
        self._failover = Failover(providers, fleet, classifier)
        self._finishing: set[asyncio.Task[int]] = set()  # stream ends outliving their client
        self._tracing = tracing or Tracing()  # off unless the composition root traces
        self._shadow = shadow  # judges a sample of answers later, off the request path

    async def aclose(self) -> None:
        """Waits for every stream end in flight (settle and audit record) to finish: call it
        at shutdown, before the budget store and the audit writer close."""
        while self._finishing:
            # wait(), not gather(): cancelling the shutdown must not cancel these.
            done, _ = await asyncio.wait(set(self._finishing))
            for task in done:
                error = None if task.cancelled() else task.exception()
                if error is not None:
                    log.error("settling a stream's end failed at shutdown", exc_info=error)

    async def handle(self, tenant: TenantContext, request: RouteRequest,
                     headers: Mapping[str, str] | None = None) -> Completed | Streaming:
        spans = self._tracing.begin(tenant, request, headers)  # continues the client's trace
        started_s = time.perf_counter()
        # One policy for the whole request, even across a reload.
        arrival = Arrival(tenant, request, self._policy.current.for_request(tenant, request),
                          started_s, spans)
        # 1 classify, 1b count and 2 decide; a refusal is raised below, after the limits.
        routed = await self.pipeline.route(arrival.plan, tenant, request, spans)
        profile = routed.profile
        # From the decision to the dispatch the request awaits its limits and budget, and
        # other requests decide meanwhile: the fleet counts it on its primary from now.
        held = routed.decided.decision.primary.name if routed.decided is not None else None
        if held is not None:
            self._fleet.hold(held)
        route: Route | None = None
        admitted: Admitted | None = None
        try:
            scopes = await self._limits.scopes_for(arrival.plan.tenant, tenant, request.tags)
            route = routed.route()  # 2 decide: its route, or its refusal raised
            admitted = await self._reserve(arrival, profile, route, scopes)  # 3 reserve
            if held is not None:  # the attempt counts it from here (no await between)
                self._fleet.unhold(held)
                held = None
            if request.stream:
                return await self._open_stream(arrival, profile, route, admitted)
            delivered = await self._failover.deliver(  # 4 dispatch
                arrival, profile, route.decision, whole_reply)
        except BaseException as exc:
            if held is not None:  # refused (limits, budget) or cancelled before dispatch
                self._fleet.unhold(held)
            attempts, cause = NO_ATTEMPTS, exc
            if isinstance(exc, Undelivered):
                attempts, cause = exc.attempts, exc.cause
            error = client_error(cause)
            await self._finish(Finished(  # settle (release) + record, however it ended
                arrival, profile, route, admitted, attempts, Usage(), error=error,
                cancelled=error is None))
            if error is None or error is cause:
                raise cause from None
            raise error from cause
        attempts, reply = delivered.attempts, delivered.result
        assert attempts.ticket is not None
        self._fleet.succeeded(attempts.ticket, None, None)  # a whole reply has no TTFT
        if delivered.mapping is not None:
            reply.body = restore_body(reply.body, delivered.mapping)
        cost = await self._finish(Finished(  # 5 settle + 6 record
            arrival, profile, route, admitted, attempts, reply.usage or Usage(),
            body=reply.body))
        return Completed(reply.body, reply.content_type,
                         response_headers(route, admitted, attempts, profile, cost),
                         delivered.endpoint)

    async def _reserve(self, arrival: Arrival, profile: Profile, route: Route,
                       scopes: tuple[ScopeLimits, ...]) -> Admitted:
        worst = worst_case_of(profile, route.decision)
        return arrival.spans.reserved(await self._budget.admit(
            arrival.plan.tenant, arrival.tenant, arrival.request.request_id, scopes,
            worst.cost_micro_usd, worst.tokens, worst,
        ))

    async def _open_stream(
        self, arrival: Arrival, profile: Profile, route: Route, admitted: Admitted
    ) -> Streaming:
        delivered = await self._failover.deliver(arrival, profile, route.decision, open_stream)
        attempts, stream = delivered.attempts, delivered.result
        if delivered.mapping is not None:
            stream = RestoringStream(stream, delivered.mapping)
        ticket, backend, fleet = attempts.ticket, attempts.backend, self._fleet
        assert ticket is not None and backend is not None

        def on_first_token() -> None:
            fleet.first_token(ticket)

        async def on_finish(outcome: StreamOutcome) -> None:
            self._measure(attempts, outcome)
            # A client that hangs up at [DONE] cancels the body's task: settling and the
            # audit record run in their own task, so they finish anyway.
            finishing = asyncio.create_task(self._finish(Finished(
                arrival, profile, route, admitted, attempts,
                # No usage chunk: the prompt estimate and one token per content event.
                outcome.usage or Usage(profile.prompt_tokens, max(0, outcome.events - 1)),
                error=outcome.error, cancelled=outcome.cancelled,
                ttft_s=(outcome.first_token_at_s - arrival.started_s)
                if outcome.first_token_at_s is not None else None,
                events=outcome.captured,
            )))
            self._finishing.add(finishing)
            finishing.add_done_callback(self._finishing.discard)
            await asyncio.shield(finishing)

        def annotate(usage: Usage) -> dict[str, str]:
            cost = cost_micro_usd(usage, self._price(backend))
            return {"cost_usd": format_usd(cost), "backend": backend.name}

        body = Relay(stream, include_usage=arrival.request.include_usage, on_finish=on_finish,
                     on_first_token=on_first_token, annotate_usage=annotate,
                     capture=arrival.plan.tenant.captures_content)
        return Streaming(body, response_headers(route, admitted, attempts, profile, None),
                         delivered.endpoint)

    def _measure(self, attempts: Attempts, outcome: StreamOutcome) -> None:
        """The backend's own TTFT and time per token: from this attempt's send, not from
        when the client's request arrived (classification and failed attempts excluded)."""
        ticket = attempts.ticket
        assert ticket is not None
        if outcome.cancelled:
            self._fleet.abandoned(ticket)
            return
        if outcome.error is not None:
            self._fleet.failed(ticket)
            return
        ttft = None
        if outcome.first_token_at_s is not None:
            ttft = outcome.first_token_at_s - attempts.sent_at_s
        total = time.perf_counter() - attempts.sent_at_s
        tokens = outcome.usage.completion_tokens if outcome.usage else outcome.events
        self._fleet.succeeded(ticket, ttft, split_latency(ttft, total, tokens))

    async def _finish(self, finished: Finished) -> int:
        """5 settle, then 6 record; the cost (micro-USD) for the client."""
        finished.arrival.spans.settling()
        settlement = await self._settle(finished)
        await self._record(finished, settlement)
        if self._shadow is not None and finished.error is None and not finished.cancelled:
            self._shadow.offer(finished)  # judged later, off the request path
        return finished.arrival.spans.settled(
            finished.attempts.backend, finished.usage, settlement.cost_micro_usd,
            finished.error, finished.cancelled, finished.ttft_s)

    async def _settle(self, finished: Finished) -> Settlement:
        """The cost of what was used, settled against the reservation (an unused one is
        released), and what the policy's baseline would have charged for it."""
        usage, backend = finished.usage, finished.attempts.backend
        cost = cost_micro_usd(usage, self._price(backend)) if backend else 0
        reservation = finished.reservation
        if reservation is not None:
            await self._budget.settle(reservation, cost, usage.total_tokens)
        elif finished.admitted is not None and finished.admitted.unmetered is not None:
            self._budget.settle_unmetered(finished.admitted.unmetered, cost, usage.total_tokens)
        baseline = finished.arrival.plan.policy.baseline
        return Settlement(cost, cost_micro_usd(usage, baseline.price)
                          if baseline is not None else None)

    async def _record(self, finished: Finished, settlement: Settlement) -> None:
        """The request's audit record: labels a client chose are masked unless the policy
        knows them, and content is kept only for tenants that opted in."""
        arrival, classifier = finished.arrival, self._classifier
        plan = arrival.plan
        content = (
            await capture(classifier, arrival.request, finished.profile, finished.body,
                          finished.events, plan.tenant.detectors)
            if plan.tenant.captures_content and finished.attempts.backend is not None
            else None
        )
        self._audit.record(audit_event(
            finished, settlement, content=content,
            labels=audit_labels(classifier, plan, arrival.request),
        ))

    def _price(self, backend: Backend) -> PricePerMTok | None:
        """What a request on this backend costs: self-hosted at the GPUs' measured effective
        price once there is enough throughput to measure, else the policy's price."""
        if backend.engine is not None and backend.engine.gpu_hourly_usd is not None:
            state = self._fleet.snapshot().backends.get(backend.name)
            measured = effective_price(backend, state.tokens_per_hour if state else None)
            if measured is not None:
                return measured
        return backend.price


def client_error(cause: BaseException) -> GatewayError | None:
    """What the client is told of a request that ended without a reply: the gateway's own
    error as raised, a bug as a 500; None when the client left (cancelled)."""
    if isinstance(cause, GatewayError):
        return cause
    if isinstance(cause, Exception):
        return InternalError("internal error while routing the request")
    return None
