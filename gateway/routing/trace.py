"""The immutable results of a request's steps (arrival, route, attempts, settlement; the
profile and the admission are defined beside their steps), the one value settling and
recording take (`Finished`), and what is made of them: the audit record and the response
headers."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from gateway.budget.limits import Reservation
from gateway.budget.pricing import format_usd
from gateway.errors import GatewayError
from gateway.policy.load_state import load_rejected
from gateway.policy.runtime import RequestPolicy
from gateway.routing.budgeting import Admitted
from gateway.scraper.fleet import Ticket
from gateway.telemetry.tracing import NO_SPANS, Spans
from gateway.types import (
    ENTRY_OF_ENDPOINT,
    AuditContent,
    AuditEvent,
    Backend,
    FleetSnapshot,
    Profile,
    RouteDecision,
    RouteRequest,
    TelemetryNote,
    TenantContext,
    Usage,
)


@dataclass(frozen=True, slots=True)
class Arrival:
    """Who asked for what, under which policy, and when: fixed when the request arrives."""

    tenant: TenantContext
    request: RouteRequest
    plan: RequestPolicy  # the policy for this request, from arrival to record
    started_s: float
    spans: Spans = NO_SPANS  # its OpenTelemetry spans (tracing on) or nothing (off)


@dataclass(frozen=True, slots=True)
class Route:
    """Step 2: the decision, and what it was decided on."""

    decision: RouteDecision
    fleet: FleetSnapshot  # the fleet as decide() saw it
    over_soft_limit: bool = False


@dataclass(frozen=True, slots=True)
class Attempts:
    """Step 4: the attempts made, in order; the last one is the one that answered (or was
    the last to fail, or was under way when the client left)."""

    backend: Backend | None = None
    ticket: Ticket | None = None  # the fleet's handle on the last attempt
    sent_at_s: float = 0.0  # when the last attempt was sent
    count: int = 0
    tried: tuple[str, ...] = ()  # backends attempted, in order
    errors: tuple[str, ...] = ()  # why each failed attempt failed
    redacted: bool = False  # an attempt went out with placeholders (left self_hosted)

    def sent(self, backend: Backend, ticket: Ticket, redacted: bool) -> Attempts:
        return Attempts(backend, ticket, time.perf_counter(), self.count + 1,
                        (*self.tried, backend.name), self.errors, self.redacted or redacted)

    def failed(self, why: str) -> Attempts:
        return replace(self, errors=(*self.errors, why))


NO_ATTEMPTS = Attempts()


@dataclass(frozen=True, slots=True)
class Finished:
    """Steps 5 and 6 take this one value: everything the request did, and how it ended.
    `route` and `admitted` are None when it ended before that step."""

    arrival: Arrival
    profile: Profile
    route: Route | None
    admitted: Admitted | None
    attempts: Attempts
    usage: Usage
    error: GatewayError | None = None
    cancelled: bool = False
    ttft_s: float | None = None  # from arrival to the first token (streams)
    body: bytes | None = None  # the whole reply, for content capture
    events: list[bytes] | None = None  # a stream's events, for content capture

    @property
    def reservation(self) -> Reservation | None:
        return self.admitted.reservation if self.admitted is not None else None


@dataclass(frozen=True, slots=True)
class Settlement:
    """Step 5: what the request cost, and what the policy's baseline would have charged."""

    cost_micro_usd: int
    baseline_cost_micro_usd: int | None = None


def audit_event(
    finished: Finished,
    settlement: Settlement,
    *,
    content: AuditContent | None = None,
    labels: tuple[str, tuple[str, ...]] | None = None,
) -> AuditEvent:
    """`labels`: the model name and tags as the record may keep them (audit_labels.py);
    without it, as the client sent them."""
    arrival, profile, usage = finished.arrival, finished.profile, finished.usage
    request, tenant, attempts = arrival.request, arrival.tenant, finished.attempts
    error = finished.error
    model, tags = labels if labels is not None else (request.model, request.tags)
    if finished.cancelled:
        status, outcome = 499, "client_disconnected"
    elif error is not None:
        status, outcome = error.status, "error"
    else:
        status, outcome = 200, "ok"
    route, backend = finished.route, attempts.backend
    decision = route.decision if route is not None else None
    return AuditEvent(
        request_id=request.request_id,
        ts_unix_s=time.time(),
        tenant_id=tenant.tenant_id,
        key_id=tenant.key_id,
        endpoint=request.endpoint.value,
        entry_point=(request.entry or ENTRY_OF_ENDPOINT[request.endpoint]).value,
        requested_model=model,
        backend=backend.name if backend else None,
        upstream_model=backend.model if backend else None,
        rule=decision.rule if decision else None,
        status=status,
        error_type=error.error_type if error else None,
        prompt_tokens=usage.prompt_tokens or (profile.prompt_tokens if error else 0),
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cost_micro_usd=settlement.cost_micro_usd,
        duration_s=time.perf_counter() - arrival.started_s,
        ttft_s=finished.ttft_s,
        attempts=attempts.count,
        stream=request.stream,
        outcome=outcome,
        rejected=decision.rejected if decision else (),
        load_rejected=load_rejected(decision.rejected) if decision else (),
        predicted_ttft_s=decision.predicted_ttft_s if decision else None,
        predicted_cost_micro_usd=decision.predicted_cost_micro_usd if decision else None,
        spill_over=decision.spilled if decision else False,
        affinity=decision.affinity.value if decision and decision.affinity else None,
        unmetered=finished.admitted is not None and finished.admitted.reservation is None,
        tenant_name=tenant.tenant_name,
        zone=backend.zone if backend else None,
        complexity=profile.complexity.label if profile.complexity else None,
        p_strong=profile.complexity.p_strong if profile.complexity else None,
        task=profile.task.type if profile.task else None,
        task_p=profile.task.p if profile.task else None,
        sensitivity=profile.sensitivity,
        sensitive_types=tuple(sorted({span.type for span in profile.spans})),
        redacted=attempts.redacted,
        max_output_tokens=request.max_output_tokens,
        tags=tags,
        over_soft_limit=route.over_soft_limit if route is not None else False,
        prompt_tokens_exact=profile.prompt_tokens_exact,
        baseline_cost_micro_usd=settlement.baseline_cost_micro_usd,
        tried=attempts.tried,
        failures=attempts.errors,
        telemetry=_telemetry_note(route.fleet, backend, decision) if route is not None else None,
        slo_miss=decision.slo_miss if decision else None,
        approval=(backend.approval_used(profile.sensitivity, attempts.redacted)
                  if backend else None),
        content=content,
    )


def _telemetry_note(
    snapshot: FleetSnapshot | None, backend: Backend | None,
    decision: RouteDecision | None = None,
) -> TelemetryNote | None:
    if snapshot is None or backend is None:
        return None
    state = snapshot.backends.get(backend.name)
    if state is None:
        return None
    # The prediction describes the primary; a fallback's note keeps only its load.
    primary = decision is not None and decision.primary is backend
    prediction = decision.prediction if primary and decision else None
    load = state.load
    if load is None:
        return TelemetryNote(in_flight=state.in_flight, prediction=prediction)
    return TelemetryNote(
        prediction=prediction,
        running=load.running,
        waiting=load.waiting,
        kv_usage=load.kv_usage,
        prefix_hit_rate=load.prefix_hit_rate,
        in_flight=state.in_flight,
        age_s=round(max(0.0, snapshot.taken_at_s - load.scraped_at_s), 3),
    )


def response_headers(
    route: Route, admitted: Admitted, attempts: Attempts, profile: Profile,
    cost_micro_usd: int | None,
) -> dict[str, str]:
    """What the client is told about its route, the classification that drove it (the
    sensitivity categories found, never the values) and, when known, its cost."""
    backend, decision = attempts.backend, route.decision
    assert backend is not None
    headers = {
        **admitted.headers,
        "x-gateway-backend": backend.name,
        "x-gateway-rule": decision.rule,
        "x-gateway-attempts": str(attempts.count),
        "x-gateway-prompt-tokens": str(profile.prompt_tokens),
        "x-gateway-sensitivity": ",".join(profile.sensitivity) or "none",
    }
    if profile.complexity is not None:
        headers["x-gateway-complexity"] = profile.complexity.label
    if decision.spilled:
        headers["x-gateway-spill-over"] = "true"
    if decision.affinity is not None:
        headers["x-gateway-affinity"] = decision.affinity.value
    if cost_micro_usd is not None:
        headers["x-gateway-cost-usd"] = format_usd(cost_micro_usd)
    return headers
