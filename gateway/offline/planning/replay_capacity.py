"""The capacity part of `gateway policy replay`: the GPUs each self-hosted deployment of the
new policy needs for the traffic as recorded and as the new policy would route it, sized as
`gateway plan --from-audit` sizes them (catalogue shapes, the policy's GPUs, 20 % headroom)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.capacity.audit_plan import DeploymentPlan
from gateway.capacity.fleet_plan import DEFAULTS, plan_one
from gateway.capacity.observed import ObservedLoad
from gateway.capacity.sizing import dollars
from gateway.offline.replay.replay_load import AFTER, BEFORE, ReplayLoad
from gateway.policy.loader import PolicySet


@dataclass(frozen=True, slots=True)
class CapacityChange:
    backend: str
    before: DeploymentPlan | None  # None: no recorded traffic on it
    after: DeploymentPlan | None  # None: the new policy sends it nothing
    problem: str | None = None  # why it could not be sized

    def gpus(self, side: DeploymentPlan | None) -> int:
        return side.plan.gpus if side is not None else 0

    def monthly(self, side: DeploymentPlan | None) -> float:
        return side.plan.monthly_usd if side is not None else 0.0


def _observed(load: ReplayLoad, minutes: int) -> ObservedLoad:
    return ObservedLoad(load.backend, minutes, load.in_flight, load.peak_qps,
                        load.peak_output_tokens_per_s, load.prompt_tokens_p90,
                        load.output_tokens_p90, load.requests, load.baseline_micro_usd)


def capacity_changes(policy: PolicySet, loads: tuple[ReplayLoad, ...],
                     minutes: int) -> list[CapacityChange]:
    sides: dict[str, dict[str, ReplayLoad]] = {}
    for load in loads:
        sides.setdefault(load.backend, {})[load.side] = load
    found = []
    for backend, by_side in sorted(sides.items()):
        planned: dict[str, DeploymentPlan | None] = {}
        problem = None
        for side in (BEFORE, AFTER):
            load = by_side.get(side)
            result = plan_one(policy, _observed(load, minutes), DEFAULTS, None) \
                if load is not None else None
            if isinstance(result, tuple):
                problem, result = result[1], None
            planned[side] = result
        engine = policy.backends[backend].engine if backend in policy.backends else None
        if engine is None or engine.gpu_hourly_usd is None:
            continue  # no GPUs to size: an API, or a backend the new policy dropped
        found.append(CapacityChange(backend, planned[BEFORE], planned[AFTER], problem))
    return found


def capacity_json(changes: list[CapacityChange]) -> list[dict[str, Any]]:
    def side(p: DeploymentPlan | None) -> dict[str, Any] | None:
        if p is None:
            return None
        return {"peak_sessions": round(p.observed.peak_sessions, 2),
                "peak_qps": round(p.observed.peak_qps, 3), "gpus": p.plan.gpus,
                "monthly_usd": p.plan.monthly_usd}

    return [{"backend": c.backend, "before": side(c.before), "after": side(c.after),
             "gpus_delta": c.gpus(c.after) - c.gpus(c.before),
             "monthly_usd_delta": round(c.monthly(c.after) - c.monthly(c.before), 2),
             "problem": c.problem} for c in changes]


def capacity_lines(changes: list[CapacityChange]) -> list[str]:
    if not changes:
        return ["capacity   no self-hosted deployment with GPUs carries this traffic"]
    lines = ["capacity   GPUs each self-hosted deployment needs for the busiest minute "
             "(+20 % headroom), recorded -> replayed"]
    for c in changes:
        if c.problem is not None:
            lines.append(f"  {c.backend}: not sized: {c.problem}")
            continue
        delta = c.monthly(c.after) - c.monthly(c.before)
        lines.append(f"  {c.backend}: {c.gpus(c.before)} -> {c.gpus(c.after)} GPUs, "
                     f"{dollars(c.monthly(c.before))} -> {dollars(c.monthly(c.after))} a month "
                     f"({'+' if delta >= 0 else ''}{dollars(delta)})")
    total = sum(c.monthly(c.after) - c.monthly(c.before) for c in changes)
    lines.append(f"  all deployments: {'+' if total >= 0 else ''}{dollars(total)} a month")
    return lines
