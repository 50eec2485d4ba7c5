"""decide(): a pure function from (request, profile, tenant, fleet, policy) to a route and why.

1. The first rule whose conditions hold fires (or the default: the model's pool as listed).
2. Its candidates (the rule's `backends`, else the requested model's pool) pass the hard
   filters: zone, allowed backends, context window (prompt + max_tokens), quality floor.
   What fails is recorded with the reason, and if nothing is left the request fails with it.
3. The survivors are ordered: `prefer` first, then by objective (predicted cost, latency,
   quality), else round-robin for load-balanced pools, else as listed.
   With live telemetry, load-balanced pools go least loaded first (predicted TTFT from the
   engine's queue and prefill backlog, then KV headroom), and a prefix or session stays on
   the replica that holds its KV cache unless that replica is clearly busier (affinity).
4. Backends that cannot take the request well right now are not dropped but moved last, so
   a degraded fleet still gets a try instead of a certain error: circuit open, KV cache too
   full for the request, engine queue over the limit, stale metrics, or a predicted miss of
   the rule's latency targets. Only stale metrics under `on_stale: fail_closed` exclude.
   When no regular candidate is left, the rule's `spill_to` backends (typically an external
   API) are tried first, under the same hard filters. Under a TTFT target the degraded of
   both go least bad first, and when none is predicted within the target the decision says
   why (`slo_miss`).
5. The rule's fallbacks (which must pass the same hard filters: sensitive data never leaks
   through a fallback) follow.
"""

from __future__ import annotations

import zlib
from dataclasses import replace

from gateway.errors import ModelNotFound, NoEligibleBackend, PermissionDenied
from gateway.policy.capacity import ROOM, assess, kv_need_tokens, queue_depth
from gateway.policy.rules import DEFAULT_RULE, Rule
from gateway.policy.runtime import PolicySet, PoolStrategy, RequestPolicy
from gateway.policy.scoring import Prediction, by_load, expected_output_tokens, order, predict
from gateway.policy.token_counting import prompt_tokens_for
from gateway.types import (
    AffinityKind,
    Backend,
    BudgetState,
    FleetSnapshot,
    PredictionNote,
    Profile,
    Rejection,
    RejectionKind,
    RouteDecision,
    RouteRequest,
    TenantContext,
)

AFFINITY_SLACK_S = 0.05  # below this, TTFT differences are noise next to a prefix-cache hit
# Read from their class, enum members cost a descriptor call each (~0.15 µs on Python 3.11):
# the per-request comparisons below use these module constants instead.
PRIORITY, LOAD_AWARE, LEAST_IN_FLIGHT = (
    PoolStrategy.PRIORITY, PoolStrategy.LOAD_AWARE, PoolStrategy.LEAST_IN_FLIGHT)
BUDGET_STATES = (BudgetState.OK, BudgetState.SOFT_LIMIT)  # indexed by over_soft_limit
# Degraded candidates go least bad first: predicted over a latency target (0), queueing for a
# slot (1, or 0 under a TTFT target: the prediction includes the wait, so a replica where the
# request would queue and one merely slow are compared on their predicted TTFT, and a queue
# predicted within the target wins over a spill target predicted over it), stale metrics (1),
# KV full (2: the engine would preempt), circuit open (3).
SEVERITY = {
    RejectionKind.TTFT_TARGET: 0, RejectionKind.TPOT_TARGET: 0, RejectionKind.QUEUED: 1,
    RejectionKind.STALE_METRICS: 1, RejectionKind.KV_FULL: 2, RejectionKind.CIRCUIT_OPEN: 3,
}


def decide(
    request: RouteRequest,
    profile: Profile,
    tenant: TenantContext,
    fleet: FleetSnapshot,
    policy: PolicySet,
    rotation: int = 0,
    over_soft_limit: bool = False,
) -> RouteDecision:
    """`decide_for` with the request's policy looked up here (tests, benchmarks)."""
    return decide_for(policy.for_request(tenant, request), request, profile, fleet, rotation,
                      over_soft_limit)


def decide_for(
    plan: RequestPolicy,
    request: RouteRequest,
    profile: Profile,
    fleet: FleetSnapshot,
    rotation: int = 0,
    over_soft_limit: bool = False,
) -> RouteDecision:
    """The route for a request under `plan` (PolicySet.for_request): the live path, explain
    and replay all decide here."""
    if not plan.model_allowed:
        raise PermissionDenied(
            f"tenant {plan.tenant_name!r} may not use model {request.model!r}",
            param="model", code="model_not_allowed",
        )
    rule = DEFAULT_RULE
    budget = BUDGET_STATES[over_soft_limit]
    for candidate in plan.rules:
        if candidate.matches_profile(request, profile, budget):
            rule = candidate
            break
    if rule.deny is not None:
        raise PermissionDenied(rule.deny, code="policy_denied")

    policy = plan.policy
    strategy = PRIORITY  # a rule's own backends: in the order it lists them
    if rule.backends is not None:
        pool = rule.backends
    else:
        found = plan.pool
        if found is None:
            raise ModelNotFound(
                f"The model '{request.model}' does not exist or you do not have access to it.",
                param="model",
            )
        pool, strategy = found.backends, found.strategy
    balanced = strategy is not PRIORITY
    load_aware = strategy is LOAD_AWARE

    rejected: list[Rejection] = []
    floor = rule.quality_floor(profile)
    fits = [b for b in pool if _admissible(b, rule, profile, floor, rejected)]
    if not fits:
        raise _nothing_fits(request, rule, rejected)

    output = expected_output_tokens(profile)
    judge_load = load_aware or rule.backends is not None
    live = fleet if judge_load else _health_only(fleet)
    good, judged = _triage(fits, rule, profile, live, policy, output, rejected, judge_load)
    spilled = False
    if not good and rule.spill_to:
        present = {b.name for b in pool}
        spill = [
            b for b in rule.spill_to
            if b.name not in present and _admissible(b, rule, profile, floor, rejected)
        ]
        good, more = _triage(spill, rule, profile, live, policy, output, rejected,
                             judge_load)
        # Under a latency target, the least bad of home and spill-over goes first (the one
        # predicted fastest among the equally degraded); otherwise home before spill-over.
        judged = sorted(judged + more, key=_first_two) if rule.ttft_s is not None else (
            judged + more
        )
        spilled = bool(good)
    degraded = [p for _, _, p in judged]

    if good and (balanced or rule.objective is not None):
        start = rotation % len(good)  # equal candidates keep taking turns
        good = good[start:] + good[:start]
    if rule.objective is not None:
        good = order(good, rule.objective)
    elif load_aware and not rule.prefer and fleet.backends:
        good = by_load(good)
    elif strategy is LEAST_IN_FLIGHT and not rule.prefer:
        good = sorted(good, key=_in_flight)
    affinity = None
    if (
        profile.affinity_key is not None and policy.telemetry.affinity and len(good) > 1
        and not rule.prefer and (load_aware or rule.objective is not None)
    ):
        good, affinity = _with_affinity(good, profile, policy.telemetry.affinity_max_load_ratio)
    ordered = [p.backend for p in _preferred_first(good, rule.prefer) + degraded]

    if rule.fallbacks:
        present = {b.name for b in ordered}
        for backend in rule.fallbacks:
            if backend.name not in present and _admissible(backend, rule, profile, 0, rejected):
                ordered.append(backend)
                present.add(backend.name)
    if rule.max_fallbacks is not None:
        ordered = ordered[: 1 + rule.max_fallbacks]
    if not ordered:  # every candidate failed closed on stale metrics
        raise _nothing_fits(request, rule, rejected)

    first = ordered[0]
    best = next((p for p in good + degraded if p.backend is first), None) or predict(
        first, profile, fleet.backends.get(first.name), output
    )
    slo_miss = None
    if rule.ttft_s is not None and best.ttft_s > rule.ttft_s:
        slo_miss = _slo_miss(rule.ttft_s, best, rejected)
    return RouteDecision(
        primary=first,
        fallbacks=tuple(ordered[1:]),
        rule=rule.name,
        rejected=tuple(rejected),
        predicted_cost_micro_usd=best.cost_micro_usd,
        predicted_ttft_s=best.ttft_s,
        predicted_total_s=best.total_s,
        objective=rule.objective.name if rule.objective else None,
        redact=rule.redact and bool(profile.spans or profile.reserved_spans),
        predicted_tpot_s=best.tpot_s,
        spilled=spilled,
        affinity=affinity,
        prediction=prediction_note(best),
        slo_miss=slo_miss,
    )


def prediction_note(p: Prediction) -> PredictionNote | None:
    """How a TTFT was predicted, for the audit row, /admin/fleet and `policy explain`."""
    if p.inputs is None:
        return None
    return PredictionNote(
        source="learned" if p.learned_samples else "prior",
        ttft_s=round(p.ttft_s, 6),
        wait_s=round(p.wait_s, 6),
        prefill_tokens_ahead=round(p.inputs.prefill_tokens_ahead),
        requests_ahead=p.inputs.requests_ahead,
        running=p.inputs.running,
        samples=p.learned_samples,
        calibration=round(p.calibration, 4),
    )


def _slo_miss(target_s: float, best: Prediction, rejected: list[Rejection]) -> str:
    """Why no candidate could be promised the target: each one's reason, in one line."""
    why = "; ".join(f"{r.backend}: {r.reason}" for r in rejected if not r.kind.by_rule)
    return (f"no candidate predicted within {round(target_s * 1000)} ms; sent to "
            f"{best.backend.name} at {round(best.ttft_s * 1000)} ms predicted"
            + (f" ({why})" if why else ""))[:500]


def _triage(
    candidates: list[Backend],
    rule: Rule,
    profile: Profile,
    fleet: FleetSnapshot,
    policy: PolicySet,
    output: int,
    rejected: list[Rejection],
    judge_load: bool = True,
) -> tuple[list[Prediction], list[tuple[int, float, Prediction]]]:
    """Split candidates into those that can take the request now and the degraded: circuit
    open, saturated (KV, queue), stale metrics or predicted to miss the SLO. The degraded are
    tried last rather than dropped; only fail-closed staleness removes a backend outright.
    Without `judge_load` (a load-blind balancer) no backend is judged saturated."""
    states = fleet.backends
    if not states and rule.ttft_s is None and rule.tpot_s is None:
        return [predict(b, profile, None, output) for b in candidates], []  # nothing to judge
    now, telemetry = fleet.taken_at_s, policy.telemetry
    good: list[Prediction] = []
    degraded: list[tuple[int, float, Prediction]] = []  # (severity, TTFT, ...): least bad first
    for backend in candidates:
        state = states.get(backend.name)
        if state is None or not judge_load:
            pressure, depth = ROOM, None
        else:
            # The engine's queue, computed once for both the pressure and the prediction.
            depth = queue_depth(backend, state) if state.load is not None else None
            need_kv = kv_need_tokens(prompt_tokens_for(backend, profile),
                                     profile.max_output_tokens, state, profile.affinity_key)
            pressure = assess(backend, state, need_kv, now, telemetry, depth)
        prediction = predict(backend, profile, state, output, pressure, depth)
        reason, kind = pressure.saturated, pressure.kind
        if pressure.hard:
            rejected.append(Rejection(backend.name, f"{reason} (fail closed)", kind))
            continue
        if state is not None and not state.available(now):
            reason, kind = f"unhealthy: circuit {state.circuit}", RejectionKind.CIRCUIT_OPEN
        elif kind is None and rule.ttft_s is not None and prediction.ttft_s > rule.ttft_s:
            reason = (f"predicted TTFT {round(prediction.ttft_s * 1000)} ms over target "
                      f"{round(rule.ttft_s * 1000)} ms")
            kind = RejectionKind.TTFT_TARGET
        elif kind is None and rule.tpot_s is not None and prediction.tpot_s > rule.tpot_s:
            reason = (f"predicted time per token {round(prediction.tpot_s * 1e6)} µs over "
                      f"target {round(rule.tpot_s * 1e6)} µs")
            kind = RejectionKind.TPOT_TARGET
        if kind is None:
            good.append(prediction)
        else:
            severity = 0 if kind is RejectionKind.QUEUED and rule.ttft_s is not None else (
                SEVERITY[kind])
            degraded.append((severity, prediction.ttft_s, prediction))
            rejected.append(Rejection(backend.name, reason, kind))
    degraded.sort(key=_first_two)
    return good, degraded  # (severity, predicted TTFT, prediction), least bad first


def _with_affinity(
    good: list[Prediction], profile: Profile, max_load_ratio: float
) -> tuple[list[Prediction], AffinityKind | None]:
    """Move the replica that owns this prefix or session (rendezvous hashing over replicas of
    the same model and price) to the front, unless its load makes clients wait clearly
    longer than on the best (a saturated replica is not a candidate at all)."""
    best = good[0]
    peers = [p for p in good if p.backend.model == best.backend.model
             and p.cost_micro_usd == best.cost_micro_usd]
    if len(peers) < 2:
        return good, None
    key = profile.affinity_key
    assert key is not None
    owner = max(peers, key=lambda p: zlib.crc32(p.backend.name.encode(), zlib.crc32(key)))
    if owner.wait_s > best.wait_s * max_load_ratio + AFFINITY_SLACK_S:
        return good, None
    if owner is best:
        return good, profile.affinity_kind
    return [owner, *(p for p in good if p is not owner)], profile.affinity_kind


def _admissible(
    backend: Backend,
    rule: Rule,
    profile: Profile,
    floor: int,
    rejected: list[Rejection],
) -> bool:
    # The common case (everything passes) costs a few comparisons; reasons are only
    # formatted for the rejected.
    zones, names = rule.allow_zones, rule.allow_backends
    allowed = (zones is None or backend.zone in zones) and (names is None or backend.name in names)
    prompt = 0
    if allowed:
        prompt = prompt_tokens_for(backend, profile)  # as the backend's tokenizer counts it
        if (prompt + (profile.max_output_tokens or 0) <= backend.context_window
                and backend.quality_tier >= floor):
            return True
    if zones is not None and backend.zone not in zones:
        kind, reason = RejectionKind.ZONE, f"zone {backend.zone} not allowed by rule {rule.name}"
    elif names is not None and backend.name not in names:
        kind, reason = RejectionKind.NOT_ALLOWED, f"not in rule {rule.name}'s allowed backends"
    elif prompt + (profile.max_output_tokens or 0) > backend.context_window:
        kind, reason = RejectionKind.CONTEXT_WINDOW, (
            f"context_window {backend.context_window} < prompt {prompt}"
            f" + max_tokens {profile.max_output_tokens or 0}"
        )
    else:
        kind = RejectionKind.QUALITY_TIER
        reason = f"quality tier {backend.quality_tier} below the floor {floor}"
    rejected.append(Rejection(backend.name, reason, kind))
    return False


def _health_only(fleet: FleetSnapshot) -> FleetSnapshot:
    """The fleet as a load-blind balancer sees it: circuits and the gateway's own counts,
    no engine metrics (for round_robin and least_in_flight pools)."""
    if not fleet.backends:
        return fleet
    return FleetSnapshot(
        {n: replace(s, load=None, ttft_model=None) for n, s in fleet.backends.items()},
        fleet.taken_at_s,
    )


def _in_flight(p: Prediction) -> int:
    return p.in_flight


def _first_two(item: tuple[int, float, Prediction]) -> tuple[int, float]:
    return item[0], item[1]


def _preferred_first(
    predictions: list[Prediction], prefer: tuple[Backend, ...]
) -> list[Prediction]:
    if not prefer:
        return predictions
    # Identity with the rule's own Backend objects: a few comparisons, nothing hashed.
    first = [p for b in prefer for p in predictions if p.backend is b]
    if not first or len(first) == len(predictions):
        return first or predictions
    taken = {id(p) for p in first}
    return first + [p for p in predictions if id(p) not in taken]


def _nothing_fits(request: RouteRequest, rule: Rule, rejected: list[Rejection]) -> Exception:
    reasons = "; ".join(f"{r.backend}: {r.reason}" for r in rejected)
    # Too long for every backend the policy allows is the client's error (400), whatever
    # the policy excluded on other grounds.
    allowed = [r for r in rejected if not r.kind.by_rule]
    if allowed and all(r.kind is RejectionKind.CONTEXT_WINDOW for r in allowed):
        return NoEligibleBackend(
            f"no backend for model '{request.model}' has room for this request: {reasons}",
            code="context_length_exceeded", status=400, error_type="invalid_request_error",
        )
    return NoEligibleBackend(
        f"rule {rule.name!r} leaves no backend for model '{request.model}': {reasons}"
    )
