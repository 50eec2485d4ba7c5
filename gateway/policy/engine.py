"""decide(): a pure function from (request, profile, tenant, fleet, policy) to a route and why.

1. The first rule whose conditions hold fires (or the default: the model's pool as listed).
2. Its candidates (the rule's `backends`, else the requested model's pool) pass the hard
   filters: zone, allowed backends, context window (prompt + max_tokens), quality floor.
   What fails is recorded with the reason, and if nothing is left the request fails with it.
3. The survivors are ordered: `prefer` first, then by objective (predicted cost, latency,
   quality), else round-robin for load-balanced pools, else as listed.
4. Unhealthy backends and those predicted to miss the rule's latency targets are not
   dropped but moved last, so a degraded fleet still gets a try instead of a certain error.
5. The rule's fallbacks (which must pass the same hard filters: sensitive data never leaks
   through a fallback) follow.
"""

from __future__ import annotations

from gateway.errors import ModelNotFound, NoEligibleBackend, PermissionDenied
from gateway.policy.loader import PolicySet
from gateway.policy.rules import DEFAULT_RULE, Rule
from gateway.policy.scoring import Prediction, expected_output_tokens, order, predict
from gateway.types import (
    Backend,
    FleetSnapshot,
    Profile,
    Rejection,
    RouteDecision,
    RouteRequest,
    TenantContext,
)

CONTEXT = "context_window"
POLICY_EXCLUSIONS = ("zone ", "not in rule")


def decide(
    request: RouteRequest,
    profile: Profile,
    tenant: TenantContext,
    fleet: FleetSnapshot,
    policy: PolicySet,
    rotation: int = 0,
) -> RouteDecision:
    allowed = policy.tenant_models.get(tenant.tenant_name)
    if allowed is not None and request.model not in allowed:
        raise PermissionDenied(
            f"tenant {tenant.tenant_name!r} may not use model {request.model!r}",
            param="model", code="model_not_allowed",
        )
    rule = DEFAULT_RULE
    for candidate in policy.applicable_rules(
        request.model, tenant.tenant_name, request.endpoint.value, request.tags
    ):
        if candidate.matches_profile(request, profile):
            rule = candidate
            break
    if rule.deny is not None:
        raise PermissionDenied(rule.deny, code="policy_denied")

    round_robin = False
    if rule.backends is not None:
        pool: tuple[Backend, ...] = tuple(policy.backends[n] for n in rule.backends)
    else:
        found = policy.pool(request.model)
        if found is None:
            raise ModelNotFound(
                f"The model '{request.model}' does not exist or you do not have access to it.",
                param="model",
            )
        pool, round_robin = found.backends, found.round_robin

    rejected: list[Rejection] = []
    needed = profile.prompt_tokens + (profile.max_output_tokens or 0)
    floor = rule.quality_floor(profile)
    fits = [b for b in pool if _admissible(b, rule, profile, needed, floor, rejected)]
    if not fits:
        raise _nothing_fits(request, rule, rejected)

    output = expected_output_tokens(profile)
    good = [predict(backend, profile, fleet, output) for backend in fits]
    degraded: list[Prediction] = []
    if fleet.health or rule.ttft_s is not None or rule.tpot_s is not None:
        ttft_max = rule.ttft_s if rule.ttft_s is not None else float("inf")
        tpot_max = rule.tpot_s if rule.tpot_s is not None else float("inf")
        keep = []
        for p in good:
            if p.ttft_s <= ttft_max and p.tpot_s <= tpot_max and (
                not fleet.health or fleet.is_healthy(p.backend.name)
            ):
                keep.append(p)
            else:
                degraded.append(p)
                rejected.append(Rejection(p.backend.name, _degraded_reason(p, rule, fleet)))
        good = keep

    if rule.objective is not None:
        good = order(good, rule.objective)
        degraded = order(degraded, rule.objective)
    elif round_robin and not rule.prefer and good:
        start = rotation % len(good)
        good = good[start:] + good[:start]
    ordered = [p.backend for p in _preferred_first(good, rule.prefer) + degraded]

    if rule.fallbacks:
        present = {b.name for b in ordered}
        for name in rule.fallbacks:
            backend = policy.backends[name]
            if name not in present and _admissible(backend, rule, profile, needed, 0, rejected):
                ordered.append(backend)
                present.add(name)
    if rule.max_fallbacks is not None:
        ordered = ordered[: 1 + rule.max_fallbacks]

    best = good[0] if good and good[0].backend is ordered[0] else predict(
        ordered[0], profile, fleet, output
    )
    return RouteDecision(
        primary=ordered[0],
        fallbacks=tuple(ordered[1:]),
        rule=rule.name,
        rejected=tuple(rejected),
        predicted_cost_micro_usd=best.cost_micro_usd,
        predicted_ttft_s=best.ttft_s,
        predicted_total_s=best.total_s,
        objective=rule.objective.name if rule.objective else None,
        redact=rule.redact and bool(profile.spans),
    )


def _admissible(
    backend: Backend,
    rule: Rule,
    profile: Profile,
    needed: int,
    floor: int,
    rejected: list[Rejection],
) -> bool:
    # The common case (everything passes) costs four comparisons; reasons are only
    # formatted for the rejected.
    zones, names = rule.allow_zones, rule.allow_backends
    if (
        (zones is None or backend.zone in zones)
        and (names is None or backend.name in names)
        and needed <= backend.context_window
        and backend.quality_tier >= floor
    ):
        return True
    if zones is not None and backend.zone not in zones:
        reason = f"zone {backend.zone} not allowed by rule {rule.name}"
    elif names is not None and backend.name not in names:
        reason = f"not in rule {rule.name}'s allowed backends"
    elif needed > backend.context_window:
        reason = (
            f"{CONTEXT} {backend.context_window} < prompt {profile.prompt_tokens}"
            f" + max_tokens {profile.max_output_tokens or 0}"
        )
    else:
        reason = f"quality tier {backend.quality_tier} below the floor {floor}"
    rejected.append(Rejection(backend.name, reason))
    return False


def _degraded_reason(prediction: Prediction, rule: Rule, fleet: FleetSnapshot) -> str:
    if fleet.health and not fleet.is_healthy(prediction.backend.name):
        return "unhealthy: circuit open"
    if rule.ttft_s is not None and prediction.ttft_s > rule.ttft_s:
        return (
            f"predicted TTFT {round(prediction.ttft_s * 1000)} ms over target "
            f"{round(rule.ttft_s * 1000)} ms"
        )
    assert rule.tpot_s is not None
    return (
        f"predicted time per token {round(prediction.tpot_s * 1e6)} µs over target "
        f"{round(rule.tpot_s * 1e6)} µs"
    )


def _preferred_first(predictions: list[Prediction], prefer: tuple[str, ...]) -> list[Prediction]:
    if not prefer:
        return predictions
    rank = {name: i for i, name in enumerate(prefer)}
    return sorted(predictions, key=lambda p: rank.get(p.backend.name, len(rank)))


def _nothing_fits(request: RouteRequest, rule: Rule, rejected: list[Rejection]) -> Exception:
    reasons = "; ".join(f"{r.backend}: {r.reason}" for r in rejected)
    # Too long for every backend the policy allows is the client's error (400), whatever
    # the policy excluded on other grounds.
    allowed = [r for r in rejected if not r.reason.startswith(POLICY_EXCLUSIONS)]
    if allowed and all(r.reason.startswith(CONTEXT) for r in allowed):
        return NoEligibleBackend(
            f"no backend for model '{request.model}' has room for this request: {reasons}",
            code="context_length_exceeded", status=400, error_type="invalid_request_error",
        )
    return NoEligibleBackend(
        f"rule {rule.name!r} leaves no backend for model '{request.model}': {reasons}"
    )
