"""Who is calling: tenants and their hashed keys, the key cache with push invalidation, and
what the database last said (keys, admin limits) for a restart while it is down."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.budget.last_known_limits import RememberedOverrides
from gateway.budget.limits_repository import LimitsRepository
from gateway.db.last_known import LastKnownFile
from gateway.routing.limits import LimitsResolver
from gateway.settings import Settings
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.key_changes import KeyChangeListener, listen_dsn
from gateway.tenancy.persisted import KeyFile
from gateway.tenancy.repository import TenantRepository


@dataclass(frozen=True, slots=True)
class Tenancy:
    tenants: TenantRepository
    authenticator: KeyAuthenticator
    key_changes: KeyChangeListener | None  # None on SQLite: no push channel
    limits: LimitsResolver
    limits_repo: LimitsRepository


async def open_last_known(stack: AsyncExitStack, settings: Settings) -> LastKnownFile | None:
    if not settings.key_cache_persist:
        return None
    last_known = LastKnownFile(settings.spool_dir / "last-known.json")
    await asyncio.to_thread(last_known.load)
    last_known.start()
    stack.push_async_callback(last_known.stop)
    return last_known


def open_tenancy(stack: AsyncExitStack, settings: Settings, engine: AsyncEngine,
                 last_known: LastKnownFile | None) -> Tenancy:
    # The pepper is read once: it is part of every stored key hash.
    pepper = settings.key_pepper.get_secret_value().encode() if settings.key_pepper else None
    tenants = TenantRepository(engine, pepper)
    limits_repo = LimitsRepository(engine)
    limits = LimitsResolver(
        RememberedOverrides(limits_repo.overrides, last_known, settings.key_cache_stale_s)
        if last_known is not None else limits_repo.overrides,
        ttl_s=settings.limits_cache_ttl_s)
    key_file = KeyFile(last_known, pepper) if last_known is not None else None
    authenticator = KeyAuthenticator(tenants.lookup, ttl_s=settings.key_cache_ttl_s,
                                     stale_s=settings.key_cache_stale_s, persisted=key_file)
    dsn = listen_dsn(settings.database_url)
    key_changes = (KeyChangeListener(dsn, on_change=authenticator.forget,
                                     on_gap=authenticator.invalidate) if dsn else None)
    if key_changes is not None:
        key_changes.start()
        stack.push_async_callback(key_changes.stop)
    return Tenancy(tenants, authenticator, key_changes, limits, limits_repo)
