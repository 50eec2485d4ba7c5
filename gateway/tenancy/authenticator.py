"""Bearer key → TenantContext, with a small in-process TTL cache in front of the database.

At thousands of requests per second the database must not see one query per request: a hit
is a dict lookup. Revocations and disabled tenants take effect within the TTL (default 30 s);
unknown keys are cached briefly too, so a client hammering with a bad key cannot hammer the
database. While the database is unreachable, known keys keep working from the cache (a key
revoked during the outage works until it is back); unknown ones get a 503.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from gateway.errors import DatabaseUnavailable
from gateway.types import TenantContext

NEGATIVE_TTL_S = 5.0
STALE_RETRY_S = 2.0  # while the database is down, how often an expired entry is re-checked
MAX_ENTRIES = 100_000

Lookup = Callable[[str], Awaitable[TenantContext | None]]


class KeyAuthenticator:
    def __init__(
        self,
        lookup: Lookup,
        *,
        ttl_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lookup = lookup
        self._ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[TenantContext | None, float]] = {}

    async def authenticate(self, key: str) -> TenantContext | None:
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and hit[1] > now:
            return hit[0]
        try:
            tenant = await self._lookup(key)
        except DatabaseUnavailable:
            if hit is None:
                raise
            # Keep serving what this key was a moment ago rather than fail every request
            # while the database is away; ask again after a short pause, not per request.
            self._cache[key] = (hit[0], now + STALE_RETRY_S)
            return hit[0]
        if len(self._cache) >= MAX_ENTRIES:
            self._evict(now)
        self._cache[key] = (tenant, now + (self._ttl_s if tenant else NEGATIVE_TTL_S))
        return tenant

    def invalidate(self) -> None:
        """Forget everything (after an admin change on this replica)."""
        self._cache.clear()

    def _evict(self, now: float) -> None:
        for key in [k for k, (_, exp) in self._cache.items() if exp <= now]:
            del self._cache[key]
        if len(self._cache) >= MAX_ENTRIES:
            self._cache.clear()
