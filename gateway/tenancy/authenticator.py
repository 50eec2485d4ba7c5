"""Bearer key → TenantContext, with a small in-process TTL cache in front of the database.

At thousands of requests per second the database must not see one query per request: a hit
is a dict lookup. A revoked key or a disabled tenant is forgotten at once when the key change
channel says so (key_changes.py: Postgres LISTEN/NOTIFY, within milliseconds on every
replica); the TTL (GATEWAY_KEY_CACHE_TTL_S, 30 s) is the bound while that channel is down and
on SQLite. Unknown keys are cached briefly too, so a client hammering with a bad key cannot
hammer the database.

While the database is unreachable, a key verified within the last `stale_s`
(GATEWAY_KEY_CACHE_STALE_S, 1 h) keeps working from the cache, re-checked every few seconds;
a revocation made during the outage applies as soon as the database answers again. Unknown
keys get a 503. With a `KeyFile` (persisted.py), keys verified by an earlier run of this
replica are served the same way after a restart while the database is still down.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from gateway.errors import DatabaseUnavailable
from gateway.types import TenantContext

NEGATIVE_TTL_S = 5.0
STALE_RETRY_S = 2.0  # while the database is down, how often an expired entry is re-checked
STALE_S = 3600.0
MAX_ENTRIES = 100_000

Lookup = Callable[[str], Awaitable[TenantContext | None]]


class VerifiedKeys(Protocol):
    """Keys verified by earlier runs, by hash (persisted.py)."""

    def get(self, key: str, max_age_s: float) -> tuple[TenantContext, float] | None:
        """The tenant and how long ago (s) it was verified, if within `max_age_s`."""
        ...

    def verified(self, key: str, tenant: TenantContext) -> None: ...
    def refused(self, key: str) -> None: ...
    def forget(self, change: dict[str, str]) -> None: ...
    def __len__(self) -> int: ...


class KeyAuthenticator:
    def __init__(
        self,
        lookup: Lookup,
        *,
        ttl_s: float = 30.0,
        stale_s: float = STALE_S,
        clock: Callable[[], float] = time.monotonic,
        persisted: VerifiedKeys | None = None,
    ) -> None:
        self._lookup = lookup
        self._ttl_s = ttl_s
        self._stale_s = stale_s
        self._clock = clock
        self._persisted = persisted
        # key → (tenant or None, expires at, verified at; all monotonic)
        self._cache: dict[str, tuple[TenantContext | None, float, float]] = {}

    async def authenticate(self, key: str) -> TenantContext | None:
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and hit[1] > now:
            return hit[0]
        try:
            tenant = await self._lookup(key)
        except DatabaseUnavailable:
            if hit is not None and hit[0] is not None and now - hit[2] <= self._stale_s:
                # Keep serving what this key was a moment ago rather than fail every request
                # while the database is away; ask again after a short pause, not per request.
                self._cache[key] = (hit[0], now + STALE_RETRY_S, hit[2])
                return hit[0]
            known = self._persisted.get(key, self._stale_s) if self._persisted else None
            if known is None:
                raise
            tenant, age_s = known  # verified by an earlier run of this replica
            self._cache[key] = (tenant, now + STALE_RETRY_S, now - age_s)
            return tenant
        if len(self._cache) >= MAX_ENTRIES:
            self._evict(now)
        self._cache[key] = (tenant, now + (self._ttl_s if tenant else NEGATIVE_TTL_S), now)
        if self._persisted is not None:
            if tenant is not None:
                self._persisted.verified(key, tenant)
            else:
                self._persisted.refused(key)
        return tenant

    @property
    def known_keys(self) -> int:
        """Keys this replica could serve without the database (readiness reports it)."""
        now = self._clock()
        live = sum(1 for tenant, _, at in self._cache.values()
                   if tenant is not None and now - at <= self._stale_s)
        return max(live, len(self._persisted) if self._persisted else 0)

    def invalidate(self) -> None:
        """Forget everything (after an admin change on this replica, or a gap in the key
        change channel)."""
        self._cache.clear()

    def forget(self, change: dict[str, str]) -> None:
        """Drop what a key change touches: {"key_id": ...} or {"tenant": name}; anything
        else drops everything."""
        key_id, tenant = change.get("key_id"), change.get("tenant")
        if key_id is None and tenant is None:
            self.invalidate()
        else:
            for key in [k for k, (ctx, _, _) in self._cache.items() if ctx is not None and (
                    ctx.key_id == key_id or ctx.tenant_name == tenant)]:
                del self._cache[key]
        if self._persisted is not None:
            self._persisted.forget(change)

    def _evict(self, now: float) -> None:
        for key in [k for k, (_, exp, _) in self._cache.items() if exp <= now]:
            del self._cache[key]
        if len(self._cache) >= MAX_ENTRIES:
            self._cache.clear()
