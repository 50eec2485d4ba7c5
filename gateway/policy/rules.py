"""Compiled rules: what a `RuleSpec` becomes at load time, and the match test decide() runs.

Matching runs for every request against every rule until one fires, so conditions are
pre-digested into frozensets, enums and plain float bounds, and the cheapest tests come
first. The backends a rule names are resolved to the policy's `Backend` objects here, once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from gateway.policy.rule_schema import Range, RuleSpec, Weights
from gateway.types import Backend, BudgetState, Profile, RouteRequest

NO_FINDINGS = "none"


@dataclass(frozen=True, slots=True)
class Bounds:
    low: float  # exclusive or inclusive per low_inclusive
    high: float
    low_inclusive: bool
    high_inclusive: bool

    def contains(self, value: float) -> bool:
        if value != value:  # NaN, a value not known (a task's p on rows recorded before it)
            return False
        if value < self.low or (value == self.low and not self.low_inclusive):
            return False
        return not (value > self.high or (value == self.high and not self.high_inclusive))


def compile_range(spec: Range | None) -> Bounds | None:
    if spec is None:
        return None
    low, low_inc = -math.inf, True
    if spec.gte is not None:
        low, low_inc = spec.gte, True
    if spec.gt is not None and spec.gt >= low:
        low, low_inc = spec.gt, False
    high, high_inc = math.inf, True
    if spec.lte is not None:
        high, high_inc = spec.lte, True
    if spec.lt is not None and spec.lt <= high:
        high, high_inc = spec.lt, False
    return Bounds(low, high, low_inc, high_inc)


@dataclass(frozen=True, slots=True)
class Objective:
    """How candidates are ordered: weights over normalised cost, latency and quality."""

    cost: float
    latency: float
    quality: float
    name: str


OBJECTIVES = {
    "cheapest": Objective(1.0, 0.0, 0.0, "cheapest"),
    "fastest": Objective(0.0, 1.0, 0.0, "fastest"),
    "balanced": Objective(1.0, 1.0, 1.0, "balanced"),
}


def compile_objective(spec: str | Weights | None) -> Objective | None:
    if spec is None:
        return None
    if isinstance(spec, str):
        return OBJECTIVES[spec]
    return Objective(spec.cost, spec.latency, spec.quality, "weights")


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    index: int
    # conditions (None: not constrained)
    tenants: frozenset[str] | None
    models: frozenset[str] | None
    sensitivity: frozenset[str] | None
    complexity: frozenset[str] | None
    p_strong: Bounds | None
    prompt_tokens: Bounds | None
    max_output_tokens: Bounds | None
    tags: frozenset[str] | None
    endpoints: frozenset[str] | None
    budget: frozenset[BudgetState] | None
    # actions
    deny: str | None
    backends: tuple[Backend, ...] | None
    allow_zones: frozenset[str] | None
    allow_backends: frozenset[str] | None
    prefer: tuple[Backend, ...]
    objective: Objective | None
    min_quality: dict[str, int] | None
    ttft_s: float | None
    tpot_s: float | None
    redact: bool
    fallbacks: tuple[Backend, ...]
    max_fallbacks: int | None
    spill_to: tuple[Backend, ...] = ()
    tasks: frozenset[str] | None = None  # conditions, kept last for their defaults
    task_p: Bounds | None = None

    def applies_to(self, model: str, tenant: str, endpoint: str, tags: tuple[str, ...]) -> bool:
        """The conditions on who asks for what, not on the content (cacheable per key)."""
        return (
            (self.models is None or model in self.models)
            and (self.tenants is None or tenant in self.tenants)
            and (self.endpoints is None or endpoint in self.endpoints)
            and (self.tags is None or not self.tags.isdisjoint(tags))
        )

    def matches_profile(
        self, request: RouteRequest, profile: Profile, budget: BudgetState = BudgetState.OK
    ) -> bool:
        """The conditions that depend on the request's content (and the budget's state)."""
        if self.budget is not None and budget not in self.budget:
            return False
        if self.sensitivity is not None:
            found = profile.sensitivity or (NO_FINDINGS,)
            if self.sensitivity.isdisjoint(found):
                return False
        if self.complexity is not None or self.p_strong is not None:
            complexity = profile.complexity
            if complexity is None:
                return False
            if self.complexity is not None and complexity.label not in self.complexity:
                return False
            if self.p_strong is not None and not self.p_strong.contains(complexity.p_strong):
                return False
        if self.tasks is not None and (profile.task is None
                                       or profile.task.type not in self.tasks):
            return False
        if self.task_p is not None and (profile.task is None
                                        or not self.task_p.contains(profile.task.p)):
            return False
        if self.prompt_tokens is not None and not self.prompt_tokens.contains(
            profile.prompt_tokens
        ):
            return False
        if self.max_output_tokens is not None:
            if profile.max_output_tokens is None:
                return False
            if not self.max_output_tokens.contains(profile.max_output_tokens):
                return False
        return True

    def quality_floor(self, profile: Profile) -> int:
        if self.min_quality is None:
            return 0
        label = profile.complexity.label if profile.complexity is not None else "medium"
        return self.min_quality.get(label, 0)


def compile_rule(spec: RuleSpec, index: int, backends: Mapping[str, Backend]) -> Rule:
    """`backends`: the policy's, by name (validation has checked every name resolves)."""
    when = spec.when

    def frozen(values: list[str] | None) -> frozenset[str] | None:
        return frozenset(values) if values is not None else None

    def resolved(names: list[str] | None) -> tuple[Backend, ...]:
        return tuple(backends[n] for n in names or ())

    floor = spec.min_quality_tier
    min_quality = (
        {"low": floor, "medium": floor, "high": floor} if isinstance(floor, int)
        else dict(floor) if floor is not None else None
    )
    return Rule(
        name=spec.name,
        index=index,
        tenants=frozen(when.tenant),
        models=frozen(when.model),
        sensitivity=frozen(when.sensitivity),
        complexity=frozen(list(when.complexity) if when.complexity else None),
        p_strong=compile_range(when.p_strong),
        prompt_tokens=compile_range(when.prompt_tokens),
        max_output_tokens=compile_range(when.max_output_tokens),
        tags=frozen(when.tags),
        endpoints=frozen(list(when.endpoint) if when.endpoint else None),
        budget=frozenset(map(BudgetState, when.budget)) if when.budget else None,
        deny=spec.deny,
        backends=resolved(spec.backends) if spec.backends is not None else None,
        allow_zones=frozen(spec.allow_zones),
        allow_backends=frozen(spec.allow_backends),
        # A name listed twice counts where it is listed last, as when prefer was a rank.
        prefer=resolved(list(dict.fromkeys(reversed(spec.prefer or ())))[::-1]),
        objective=compile_objective(spec.objective),
        min_quality=min_quality,
        ttft_s=spec.slo.ttft_ms / 1000 if spec.slo and spec.slo.ttft_ms else None,
        tpot_s=spec.slo.tpot_ms / 1000 if spec.slo and spec.slo.tpot_ms else None,
        redact=spec.redact,
        fallbacks=resolved(spec.fallbacks),
        max_fallbacks=spec.max_fallbacks,
        spill_to=resolved(spec.spill_to),
        tasks=frozen(list(when.task) if when.task else None),
        task_p=compile_range(when.task_p),
    )


# What a request gets when no rule matches (or the policy has none): the model's pool as
# the operator ordered it, load-balanced if the pool says so.
DEFAULT_RULE = Rule(
    name="model-pool", index=-1, tenants=None, models=None, sensitivity=None, complexity=None,
    p_strong=None, prompt_tokens=None, max_output_tokens=None, tags=None, endpoints=None,
    budget=None, deny=None, backends=None, allow_zones=None, allow_backends=None, prefer=(),
    objective=None, min_quality=None, ttft_s=None, tpot_s=None, redact=False, fallbacks=(),
    max_fallbacks=None,
)
