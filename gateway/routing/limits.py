"""Which budgets and rate limits apply to a request: the scopes (tenant, key, tags) and their
limits in the budget store's terms.

Limits come from the policy file (`tenants:`) and from the admin API (a row per scope in the
database, which replaces the policy's setting for that scope). The database is read at most
once per tenant per `ttl_s`, so every replica sees an admin change within that time and the
request path almost never waits on SQL.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from gateway.budget.limits import BudgetLimits, RateLimits, ScopeLimits
from gateway.budget.limits_repository import ScopeOverrides
from gateway.errors import DatabaseUnavailable
from gateway.policy.loader import PolicySet
from gateway.policy.schema import BudgetSpec, LimitsSpec, ScopeSpec, TenantSpec
from gateway.types import TenantContext

MICRO = 1_000_000
STALE_RETRY_S = 2.0  # while the database is down, last known limits serve this long at a time
NO_TENANT_SPEC = TenantSpec()
# The tenant scope is always present, limited or not: spend is counted for usage reports.
UNLIMITED_TENANT = (ScopeLimits("tenant"),)
NO_OVERRIDES: dict[str, ScopeSpec] = {}  # shared, never written: what no database returns
MAX_BUILT = 10_000  # (tenant, key, tags) combinations remembered; forgotten all at once
_Who = tuple[str, str | None, tuple[str, ...]]


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
    if spec is None:
        return None
    budget, rate = budget_limits(spec.budget), rate_limits(spec.limits)
    if budget is None and rate is None:
        return None
    return ScopeLimits(scope, budget, rate)


def override_spec(row: tuple[dict[str, Any] | None, dict[str, Any] | None]) -> ScopeSpec:
    budget, limits = row
    return ScopeSpec(
        budget=BudgetSpec.model_validate(budget) if budget is not None else None,
        limits=LimitsSpec.model_validate(limits) if limits is not None else None,
    )


class LimitsResolver:
    def __init__(
        self,
        load_overrides: Callable[[str], Awaitable[ScopeOverrides]] | None,
        *,
        ttl_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load_overrides
        self._ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[float, dict[str, ScopeSpec]]] = {}
        # (tenant, key, tags) → the scopes last built for them and the specs they were built
        # from: specs are frozen and an overrides dict is never changed once cached, so while
        # both are the same objects the scopes are too, and a request skips rebuilding them.
        self._built: dict[_Who, tuple[TenantSpec, dict[str, ScopeSpec],
                                      tuple[ScopeLimits, ...]]] = {}

    def invalidate(self, tenant_id: str) -> None:
        self._cache.pop(tenant_id, None)

    async def scopes(
        self, policy: PolicySet, tenant: TenantContext, tags: tuple[str, ...]
    ) -> tuple[ScopeLimits, ...]:
        spec = policy.tenant_specs.get(tenant.tenant_name, NO_TENANT_SPEC)
        overrides = await self._overrides(tenant.tenant_id)
        if not overrides and spec is NO_TENANT_SPEC:
            return UNLIMITED_TENANT  # the common embedded case: nothing to look up
        who = (tenant.tenant_id, tenant.key_id, tags)
        built = self._built.get(who)
        if built is not None and built[0] is spec and built[1] is overrides:
            return built[2]
        found = self._build(spec, overrides, tenant, tags)
        if len(self._built) > MAX_BUILT:
            self._built.clear()
        self._built[who] = (spec, overrides, found)
        return found

    @staticmethod
    def _build(spec: TenantSpec, overrides: dict[str, ScopeSpec], tenant: TenantContext,
               tags: tuple[str, ...]) -> tuple[ScopeLimits, ...]:
        found = [
            scope_limits("tenant", overrides.get("tenant") or ScopeSpec(
                budget=spec.budget, limits=spec.limits
            )) or ScopeLimits("tenant"),
        ]
        key_scope = f"key:{tenant.key_id}"
        key = scope_limits(key_scope, overrides.get(key_scope) or spec.per_key)
        if key is not None:
            found.append(key)
        for tag in dict.fromkeys(tags):
            tag_scope = f"tag:{tag}"
            limits = scope_limits(tag_scope, overrides.get(tag_scope) or spec.tags.get(tag))
            if limits is not None:
                found.append(limits)
        return tuple(found)

    async def _overrides(self, tenant_id: str) -> dict[str, ScopeSpec]:
        if self._load is None:
            return NO_OVERRIDES
        now = self._clock()
        cached = self._cache.get(tenant_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            rows = await self._load(tenant_id)
        except DatabaseUnavailable:
            if cached is None:
                raise  # an admin limit may exist: refusing beats ignoring it
            self._cache[tenant_id] = (now + STALE_RETRY_S, cached[1])  # last known limits
            return cached[1]
        specs = {scope: override_spec(row) for scope, row in rows.items()}
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[tenant_id] = (now + self._ttl_s, specs)
        return specs
