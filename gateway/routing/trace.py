"""What the request path learned about one request (the route, the attempts, the budget's
answer), and the audit record made from it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gateway.budget.pricing import format_usd
from gateway.classify.redaction import RedactionMap
from gateway.errors import GatewayError
from gateway.telemetry.tracing import NO_SPANS, Spans
from gateway.types import (
    AuditContent,
    AuditEvent,
    Backend,
    FleetSnapshot,
    Payload,
    Profile,
    RouteDecision,
    RouteRequest,
    TelemetryNote,
    TenantContext,
    TenantDetector,
    Usage,
)


@dataclass(slots=True)
class RequestTrace:
    """What the request path learned, for the audit record."""

    started_s: float
    decision: RouteDecision | None = None
    backend: Backend | None = None
    attempts: int = 0
    attempt_started_s: float = 0.0  # when the attempt that answered was sent
    headers: dict[str, str] = field(default_factory=dict)  # rate-limit and budget headers
    unmetered: bool = False  # admitted without the budget store (it was down; fail open)
    errors: list[str] = field(default_factory=list)
    redacted: tuple[Payload, RedactionMap] | None = None
    detectors: tuple[TenantDetector, ...] = ()  # the tenant's own, from the policy
    snapshot: FleetSnapshot | None = None  # the fleet as decide() saw it
    tried: list[str] = field(default_factory=list)  # backends attempted, in order
    over_soft_limit: bool = False
    capture: bool = False  # keep the redacted prompt and answer (the tenant opted in)
    spans: Spans = NO_SPANS  # its OpenTelemetry spans (tracing on) or nothing (off)


def audit_event(
    tenant: TenantContext,
    request: RouteRequest,
    profile: Profile,
    trace: RequestTrace,
    usage: Usage,
    cost_micro_usd: int,
    *,
    error: GatewayError | None,
    cancelled: bool,
    ttft_s: float | None,
    baseline_cost_micro_usd: int | None = None,
    content: AuditContent | None = None,
    labels: tuple[str, tuple[str, ...]] | None = None,
) -> AuditEvent:
    """`labels`: the model name and tags as the record may keep them (audit_labels.py);
    without it, as the client sent them."""
    model, tags = labels if labels is not None else (request.model, request.tags)
    if cancelled:
        status, outcome = 499, "client_disconnected"
    elif error is not None:
        status, outcome = error.status, "error"
    else:
        status, outcome = 200, "ok"
    decision, backend = trace.decision, trace.backend
    return AuditEvent(
        request_id=request.request_id,
        ts_unix_s=time.time(),
        tenant_id=tenant.tenant_id,
        key_id=tenant.key_id,
        endpoint=request.endpoint.value,
        requested_model=model,
        backend=backend.name if backend else None,
        upstream_model=backend.model if backend else None,
        rule=decision.rule if decision else None,
        status=status,
        error_type=error.error_type if error else None,
        prompt_tokens=usage.prompt_tokens or (profile.prompt_tokens if error else 0),
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cost_micro_usd=cost_micro_usd,
        duration_s=time.perf_counter() - trace.started_s,
        ttft_s=ttft_s,
        attempts=trace.attempts,
        stream=request.stream,
        outcome=outcome,
        rejected=decision.rejected if decision else (),
        predicted_ttft_s=decision.predicted_ttft_s if decision else None,
        predicted_cost_micro_usd=decision.predicted_cost_micro_usd if decision else None,
        spill_over=decision.spilled if decision else False,
        affinity=decision.affinity if decision else None,
        unmetered=trace.unmetered,
        tenant_name=tenant.tenant_name,
        zone=backend.zone if backend else None,
        complexity=profile.complexity.label if profile.complexity else None,
        p_strong=profile.complexity.p_strong if profile.complexity else None,
        task=profile.task.type if profile.task else None,
        sensitivity=profile.sensitivity,
        sensitive_types=tuple(sorted({span.type for span in profile.spans})),
        redacted=trace.redacted is not None,
        max_output_tokens=request.max_output_tokens,
        tags=tags,
        over_soft_limit=trace.over_soft_limit,
        prompt_tokens_exact=profile.prompt_tokens_exact,
        baseline_cost_micro_usd=baseline_cost_micro_usd,
        tried=tuple(trace.tried),
        telemetry=_telemetry_note(trace.snapshot, backend, decision),
        slo_miss=decision.slo_miss if decision else None,
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
    trace: RequestTrace, profile: Profile, cost_micro_usd: int | None
) -> dict[str, str]:
    """What the client is told about its route, the classification that drove it (the
    sensitivity categories found, never the values) and, when known, its cost."""
    assert trace.backend is not None and trace.decision is not None
    headers = {
        **trace.headers,
        "x-gateway-backend": trace.backend.name,
        "x-gateway-rule": trace.decision.rule,
        "x-gateway-attempts": str(trace.attempts),
        "x-gateway-prompt-tokens": str(profile.prompt_tokens),
        "x-gateway-sensitivity": ",".join(profile.sensitivity) or "none",
    }
    if profile.complexity is not None:
        headers["x-gateway-complexity"] = profile.complexity.label
    if trace.decision.spilled:
        headers["x-gateway-spill-over"] = "true"
    if trace.decision.affinity is not None:
        headers["x-gateway-affinity"] = trace.decision.affinity
    if cost_micro_usd is not None:
        headers["x-gateway-cost-usd"] = format_usd(cost_micro_usd)
    return headers
