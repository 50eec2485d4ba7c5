"""Explain a route without sending anything: classify the request, decide, and describe why.

Used by `gateway policy explain` and `POST /admin/policy/explain`; both route through the
request path's own classify → count → decide (routing/pipeline.py), so what it says is what
the gateway would do.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Any

from gateway.budget.pricing import format_usd
from gateway.classify.profiler import RequestClassifier
from gateway.classify.router_registry import FittedRouters
from gateway.errors import GatewayError
from gateway.policy.loader import PolicySet
from gateway.policy.runtime import RequestPolicy
from gateway.routing.pipeline import FixedFleet, RoutePipeline
from gateway.types import (
    Complexity,
    FleetSnapshot,
    Profile,
    RouteRequest,
    TenantContext,
    TenantDetector,
)


async def explain(
    classifier: RequestClassifier,
    policy: PolicySet,
    tenant: TenantContext,
    request: RouteRequest,
    fleet: FleetSnapshot | None = None,
    routers: FittedRouters | None = None,
) -> dict[str, Any]:
    """Offline (`gateway policy explain`): the fleet as given (else empty), no engine to ask
    for its own count and no budget store, so no tenant is over a soft limit."""
    plan = policy.for_request(tenant, request)
    # The fitted router the policy names for this tenant or model, as the request path uses
    # it; read from disk (in a thread) unless the caller holds the loaded ones.
    if routers is None and plan.router is not None:
        routers = FittedRouters()
        await asyncio.to_thread(routers.refresh, (plan.router,))
    pipeline = RoutePipeline(classifier, FixedFleet(fleet or FleetSnapshot()), routers=routers)
    return await explain_route(pipeline, classifier, plan, tenant, request)


async def explain_route(
    pipeline: RoutePipeline,
    classifier: RequestClassifier,
    plan: RequestPolicy,
    tenant: TenantContext,
    request: RouteRequest,
) -> dict[str, Any]:
    """The request routed as the gateway would route it now, described; its turn among
    equal candidates is the next request's, and is left to that request."""
    routed = await pipeline.route(plan, tenant, request, take_turn=False)
    profile = routed.profile
    described = describe_profile(profile)
    described["allowed"] = await _allowed_findings(classifier, request, plan.tenant.detectors,
                                                   profile)
    out: dict[str, Any] = {"model": request.model, "tenant": tenant.tenant_name,
                           "profile": described, "over_soft_limit": routed.over_soft_limit}
    try:
        decision = routed.route().decision
    except GatewayError as exc:
        out["outcome"] = "refused"
        out["error"] = exc.to_dict()["error"] | {"status": exc.status}
        return out
    out |= {
        "outcome": "routed",
        "rule": decision.rule,
        "objective": decision.objective,
        "primary": decision.primary.name,
        "fallbacks": [b.name for b in decision.fallbacks],
        "redact": decision.redact,
        "predicted": {
            "cost_usd": format_usd(decision.predicted_cost_micro_usd),
            "ttft_ms": round(decision.predicted_ttft_s * 1000, 1),
            "total_ms": round(decision.predicted_total_s * 1000, 1),
            # What the TTFT was computed from (null without live telemetry).
            "ttft_inputs": asdict(decision.prediction) if decision.prediction else None,
        },
        "slo_miss": decision.slo_miss,
        "rejected": [{"backend": r.backend, "reason": r.reason} for r in decision.rejected],
        # The approvals (policy `approval`) under which this request's sensitive data would
        # reach each external candidate unredacted.
        "approvals": {b.name: used for b in (decision.primary, *decision.fallbacks)
                      if (used := b.approval_used(profile.sensitivity, decision.redact))},
    }
    return out


async def _allowed_findings(
    classifier: RequestClassifier, request: RouteRequest,
    detectors: tuple[TenantDetector, ...], profile: Profile,
) -> list[dict[str, Any]]:
    """What the policy's allowed values took out: the scan again without them, less what
    stayed. Only here, so an operator can see an allowlist entry at work."""
    kept = tuple(d for d in detectors if not d.allow)
    if len(kept) == len(detectors):
        return []
    unfiltered = await classifier.profile(request, detectors=kept)
    stayed = {(s.start, s.end) for s in (*profile.spans, *profile.reserved_spans)}
    return [{"type": s.type, "start": s.start, "end": s.end}
            for s in (*unfiltered.spans, *unfiltered.reserved_spans)
            if (s.start, s.end) not in stayed]


def describe_profile(profile: Profile) -> dict[str, Any]:
    return {
        "prompt_tokens": profile.prompt_tokens,
        "prompt_tokens_exact": profile.prompt_tokens_exact,
        # Exact counts besides o200k: another encoding a backend uses, or an engine's own
        # ("engine:<backend>", asked when the estimate would refuse the prompt).
        "prompt_tokens_by_encoding": dict(profile.prompt_tokens_by_encoding),
        "max_output_tokens": profile.max_output_tokens,
        "complexity": _complexity(profile.complexity) if profile.complexity else None,
        "task": {"type": profile.task.type, "p": round(profile.task.p, 4)}
        if profile.task else None,
        "sensitivity": list(profile.sensitivity),
        "findings": [{"type": s.type, "start": s.start, "end": s.end} for s in profile.spans],
        # Stand-ins and findings below min_confidence: masked by redaction, not routed on.
        "masked_only": [{"type": s.type, "start": s.start, "end": s.end,
                         "confidence": s.confidence} for s in profile.reserved_spans],
    }


def _complexity(complexity: Complexity) -> dict[str, Any]:
    described: dict[str, Any] = {"p_strong": round(complexity.p_strong, 4),
                                 "class": complexity.label}
    if complexity.turns_back:  # a follow-up rated by the harder question before it
        described["turns_back"] = complexity.turns_back
    return described


def render_table(result: dict[str, Any]) -> str:
    """The explanation as plain text for a terminal."""
    p = result["profile"]
    complexity = p["complexity"]
    lines = [
        f"model      {result['model']}   tenant {result['tenant']}",
        f"profile    {p['prompt_tokens']} prompt tokens"
        f"{'' if p['prompt_tokens_exact'] else ' (estimate; bound proves no threshold crossed)'}"
        f", max_tokens {p['max_output_tokens'] or '-'}"
        + (f", complexity {complexity['class']} (p_strong {complexity['p_strong']}"
           + (f", from the user message {complexity['turns_back']} turn(s) before the last"
              if complexity.get("turns_back") else "") + ")"
           if complexity else "")
        + (f", task {p['task']['type']} (p {p['task']['p']})" if p.get("task") else "")
        + f", sensitivity {', '.join(p['sensitivity']) or 'none'}",
    ]
    if p.get("prompt_tokens_by_encoding"):
        lines.append("counted    " + ", ".join(
            f"{n} tokens by {key}" for key, n in p["prompt_tokens_by_encoding"].items()))
    if result.get("over_soft_limit"):
        lines.append("budget     over a soft limit: rules with `budget: [soft_limit]` apply")
    if p["masked_only"]:
        lines.append("not routed on (masked if redacted): " + ", ".join(
            f"{m['type']} {m['confidence']}" for m in p["masked_only"]))
    if p.get("allowed"):
        lines.append("allowed by the policy (not routed on, not masked): " + ", ".join(
            f"{a['type']} {a['start']}-{a['end']}" for a in p["allowed"]))
    if result["outcome"] == "refused":
        err = result["error"]
        lines.append(f"REFUSED    {err['status']} {err['code'] or err['type']}: {err['message']}")
        return "\n".join(lines)
    pred = result["predicted"]
    lines += [
        f"rule       {result['rule']}" + (f"  (objective {result['objective']})"
                                          if result["objective"] else ""),
        f"primary    {result['primary']}   predicted ${pred['cost_usd']}, "
        f"TTFT {pred['ttft_ms']} ms, total {pred['total_ms']} ms"
        + ("   [redacted before leaving self_hosted]" if result["redact"] else ""),
        f"fallbacks  {', '.join(result['fallbacks']) or '-'}",
    ]
    inputs = pred.get("ttft_inputs")
    if inputs:
        lines.append(
            f"TTFT from  {inputs['source']} model ({inputs['samples']} samples): "
            f"{inputs['prefill_tokens_ahead']} prefill tokens ahead, {inputs['requests_ahead']} "
            f"requests ahead, {inputs['running']} running; {round(inputs['wait_s'] * 1000)} ms "
            "of it is load"
            + (f"; calibrated ×{inputs['calibration']:.2f} to recent measurements"
               if inputs.get("calibration", 1.0) != 1.0 else "")
        )
    for backend, approval in result.get("approvals", {}).items():
        lines.append(f"approval   {backend}: {approval} (sensitivity "
                     f"{', '.join(p['sensitivity'])} sent unredacted under it)")
    if result.get("slo_miss"):
        lines.append(f"SLO miss   {result['slo_miss']}")
    if result["rejected"]:
        width = max(len(r["backend"]) for r in result["rejected"])
        lines.append("rejected")
        lines += [f"  {r['backend']:<{width}}  {r['reason']}" for r in result["rejected"]]
    return "\n".join(lines)
