"""Each tenant's policy settings in their runtime form, compiled once when the policy loads:
enums instead of the schema's strings, budgets and rate limits already in the budget store's
terms (integer micro-USD), detectors resolved. The request path reads only these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from gateway.policy.schema import AllowedValuesSpec, BudgetSpec, LimitsSpec, ScopeSpec, TenantSpec
from gateway.types import BudgetLimits, RateLimits, ScopeLimits, TenantDetector

MICRO = 1_000_000
TENANT_SCOPE = ScopeLimits("tenant")  # always present, limited or not: usage reports count it


class StoreContent(StrEnum):
    """What the audit record keeps of prompts and answers (policy `store_content`)."""

    NONE = "none"
    REDACTED = "redacted"  # with sensitive spans replaced by typed placeholders
    FULL = "full"  # that too, and stored Responses API responses as sent


class BudgetStoreFailure(StrEnum):
    """What a request meets when the budget store cannot answer (`on_budget_store_error`)."""

    FAIL_OPEN = "fail_open"  # served unmetered, counted
    FAIL_CLOSED = "fail_closed"  # refused with 503


@dataclass(frozen=True, slots=True)
class TenantPolicy:
    """One tenant's settings (or the defaults every tenant the policy does not name gets)."""

    models: frozenset[str] | None = None  # None: every model
    detectors: tuple[TenantDetector, ...] = ()  # its own, and the values allowed for it
    min_confidence: float = 0.0
    store_content: StoreContent = StoreContent.NONE
    # Stored Responses kept this long (seconds); None: the process-wide retention setting.
    responses_retention_s: float | None = None
    on_budget_store_error: BudgetStoreFailure = BudgetStoreFailure.FAIL_OPEN
    tenant_limits: ScopeLimits = TENANT_SCOPE
    key_budget: BudgetLimits | None = None  # what each of its API keys gets (`per_key`)
    key_rate: RateLimits | None = None
    tag_limits: Mapping[str, ScopeLimits] = field(default_factory=lambda: MappingProxyType({}))
    # Tags the policy names for it: safe identifiers the audit record keeps as sent.
    known_tags: frozenset[str] = frozenset()
    limited: bool = False  # any budget or rate limit at all in the policy

    @property
    def captures_content(self) -> bool:
        return self.store_content is not StoreContent.NONE


def budget_limits(spec: BudgetSpec | None) -> BudgetLimits | None:
    if spec is None:
        return None
    return BudgetLimits(
        daily_micro_usd=None if spec.daily_usd is None else round(spec.daily_usd * MICRO),
        monthly_micro_usd=None if spec.monthly_usd is None else round(spec.monthly_usd * MICRO),
        daily_tokens=spec.daily_tokens,
        monthly_tokens=spec.monthly_tokens,
        soft_fraction=spec.soft_limit,
    )


def rate_limits(spec: LimitsSpec | None) -> RateLimits | None:
    if spec is None or (spec.rpm is None and spec.tpm is None and spec.concurrent is None):
        return None
    return RateLimits(rpm=spec.rpm, tpm=spec.tpm, concurrent=spec.concurrent)


def scope_limits(scope: str, spec: ScopeSpec | None) -> ScopeLimits | None:
    """A scope's limits in the store's terms; None when the spec limits nothing."""
    if spec is None:
        return None
    budget, rate = budget_limits(spec.budget), rate_limits(spec.limits)
    if budget is None and rate is None:
        return None
    return ScopeLimits(scope, budget, rate)


def override_limits(
    scope: str, budget: dict[str, Any] | None, limits: dict[str, Any] | None
) -> ScopeLimits | None:
    """An admin API override (a database row: its budget and limits as JSON) compiled like
    the policy's own; None when it lifts every limit of the scope."""
    return scope_limits(scope, ScopeSpec(
        budget=BudgetSpec.model_validate(budget) if budget is not None else None,
        limits=LimitsSpec.model_validate(limits) if limits is not None else None,
    ))


def compile_tenant(
    spec: TenantSpec, shared_allow: list[AllowedValuesSpec], default_min_confidence: float
) -> TenantPolicy:
    tenant = scope_limits("tenant", ScopeSpec(budget=spec.budget, limits=spec.limits))
    key = spec.per_key
    tags = {tag: limits for tag, scope in spec.tags.items()
            if (limits := scope_limits(f"tag:{tag}", scope)) is not None}
    key_budget = budget_limits(key.budget) if key is not None else None
    key_rate = rate_limits(key.limits) if key is not None else None
    own = tuple(TenantDetector(d.name, d.category, d.regex, tuple(d.words or ()))
                for d in spec.detectors)
    return TenantPolicy(
        models=frozenset(spec.models) if spec.models is not None else None,
        detectors=own + allowed_values([*shared_allow, *spec.allow]),
        min_confidence=(spec.min_confidence if spec.min_confidence is not None
                        else default_min_confidence),
        store_content=StoreContent(spec.store_content),
        responses_retention_s=(None if spec.responses_retention_hours is None
                               else spec.responses_retention_hours * 3600),
        on_budget_store_error=BudgetStoreFailure(spec.on_budget_store_error),
        tenant_limits=tenant or TENANT_SCOPE,
        key_budget=key_budget,
        key_rate=key_rate,
        tag_limits=MappingProxyType(tags),
        known_tags=frozenset(spec.tags),
        limited=tenant is not None or key_budget is not None or key_rate is not None
        or bool(tags),
    )


def allowed_values(specs: list[AllowedValuesSpec]) -> tuple[TenantDetector, ...]:
    return tuple(TenantDetector(a.name, "", a.regex, tuple(a.values or ()), allow=True)
                 for a in specs)
