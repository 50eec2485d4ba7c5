"""Which budgets and rate limits apply to a request: the scopes (tenant, key, tags) and their
limits in the budget store's terms.

Limits come from the policy file (`tenants:`) and from the admin API (a row per scope in the
database, which replaces the policy's setting for that scope). Both are in the budget store's
terms before a request needs them: the policy's when it loads, an override row when it is
read. The database is read at most once per tenant per `ttl_s`, so every replica sees an
admin change within that time and the request path almost never waits on SQL. When the time is
up, the requests that arrive while the read is under way wait for that one read: at 16 in
flight, each used to send its own query (past the connection pool's size, opening connections
and rewriting the last-known file as many times).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from gateway.budget.limits import ScopeLimits
from gateway.budget.limits_repository import ScopeOverrides
from gateway.errors import DatabaseUnavailable
from gateway.policy.runtime import PolicySet
from gateway.policy.tenants import TENANT_SCOPE, TenantPolicy, override_limits
from gateway.types import TenantContext

STALE_RETRY_S = 2.0  # while the database is down, last known limits serve this long at a time
# The tenant scope is always present, limited or not: spend is counted for usage reports.
UNLIMITED_TENANT = (TENANT_SCOPE,)


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
        self._cache: dict[str, tuple[float, dict[str, ScopeLimits | None]]] = {}
        self._reading: dict[str, asyncio.Future[ScopeOverrides]] = {}  # one read per tenant

    def invalidate(self, tenant_id: str) -> None:
        self._cache.pop(tenant_id, None)

    async def scopes(
        self, policy: PolicySet, tenant: TenantContext, tags: tuple[str, ...]
    ) -> tuple[ScopeLimits, ...]:
        """`scopes_for` with the tenant's policy looked up (admin API, CLI)."""
        return await self.scopes_for(policy.tenant(tenant.tenant_name), tenant, tags)

    async def scopes_for(
        self, policy: TenantPolicy, tenant: TenantContext, tags: tuple[str, ...]
    ) -> tuple[ScopeLimits, ...]:
        """The scopes a request is admitted against: the policy's (compiled at load), each
        replaced by the admin API's override where one exists."""
        overrides = await self._overrides(tenant.tenant_id)
        if not overrides and not policy.limited:
            return UNLIMITED_TENANT  # the common embedded case: nothing to look up
        tenant_scope = (overrides["tenant"] if "tenant" in overrides
                        else policy.tenant_limits) or TENANT_SCOPE
        found = [tenant_scope]
        key_scope = f"key:{tenant.key_id}"
        if key_scope in overrides:
            key = overrides[key_scope]
        elif policy.key_budget is not None or policy.key_rate is not None:
            key = ScopeLimits(key_scope, policy.key_budget, policy.key_rate)
        else:
            key = None
        if key is not None:
            found.append(key)
        for tag in dict.fromkeys(tags):
            tag_scope = f"tag:{tag}"
            limits = (overrides[tag_scope] if tag_scope in overrides
                      else policy.tag_limits.get(tag))
            if limits is not None:
                found.append(limits)
        return tuple(found)

    async def _overrides(self, tenant_id: str) -> dict[str, ScopeLimits | None]:
        if self._load is None:
            return {}
        now = self._clock()
        cached = self._cache.get(tenant_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            rows = await self._read(tenant_id)
        except DatabaseUnavailable:
            if cached is None:
                raise  # an admin limit may exist: refusing beats ignoring it
            self._cache[tenant_id] = (now + STALE_RETRY_S, cached[1])  # last known limits
            return cached[1]
        specs = {scope: override_limits(scope, *row) for scope, row in rows.items()}
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[tenant_id] = (now + self._ttl_s, specs)
        return specs

    async def _read(self, tenant_id: str) -> ScopeOverrides:
        """The tenant's override rows, read once for every request waiting on them. Shielded:
        a request whose client leaves does not cancel the read the others wait on."""
        assert self._load is not None
        reading = self._reading.get(tenant_id)
        if reading is None:
            reading = self._reading[tenant_id] = asyncio.ensure_future(self._load(tenant_id))
            reading.add_done_callback(lambda done: self._read_done(tenant_id, done))
        return await asyncio.shield(reading)

    def _read_done(self, tenant_id: str, done: asyncio.Future[ScopeOverrides]) -> None:
        if self._reading.get(tenant_id) is done:
            del self._reading[tenant_id]
        if not done.cancelled():
            done.exception()  # retrieved here too: every waiter may have left
