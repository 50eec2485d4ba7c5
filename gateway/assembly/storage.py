"""The database engine, the Redis client and the budget store on it. Handlers never see the
engine or the client: they get the repositories and probes built on them."""

from __future__ import annotations

import contextlib
from contextlib import AsyncExitStack

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.spend_repository import AuditSpend
from gateway.budget.leasing import LeasingBudgetStore
from gateway.budget.limits import BudgetUnavailable
from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.budget.spend_ledger import SpendLedger
from gateway.budget.store import BudgetStore
from gateway.db.engine import COMMAND_TIMEOUT_S, create_engine
from gateway.db.migrate import upgrade
from gateway.routing.spend_guard import SpendGuard
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics


async def open_database(stack: AsyncExitStack, settings: Settings) -> AsyncEngine:
    engine = create_engine(settings.database_url, command_timeout_s=COMMAND_TIMEOUT_S)
    stack.push_async_callback(engine.dispose)
    if settings.is_embedded_db:
        await upgrade(engine)  # the embedded file migrates itself; Postgres never on start-up
    return engine


def open_redis(stack: AsyncExitStack, settings: Settings) -> Redis | None:
    if not settings.redis_url:
        return None
    redis = make_client(settings.redis_url, settings.redis_timeout_s)
    stack.push_async_callback(redis.aclose)
    return redis


def open_budget_store(stack: AsyncExitStack, settings: Settings, redis: Redis | None,
                      metrics: GatewayMetrics) -> BudgetStore:
    store: BudgetStore = (
        RedisBudgetStore(redis, reservation_ttl_s=settings.budget_reservation_ttl_s,
                         op_timeout_s=2 * settings.redis_timeout_s)
        if redis is not None
        else MemoryBudgetStore(reservation_ttl_s=settings.budget_reservation_ttl_s)
    )
    if redis is not None and settings.budget_lease_s > 0:
        # Replicas admit from leased slices: one Redis call per lease, not per request.
        leasing = LeasingBudgetStore(store, lease_s=settings.budget_lease_s)
        metrics.watch_budget_leases(leasing.stats.numbers)
        store = leasing

    async def close() -> None:
        with contextlib.suppress(BudgetUnavailable):
            await store.close()  # settles open leases; registered after Redis, so runs first

    stack.push_async_callback(close)
    return store


def open_spend_guard(settings: Settings, redis: Redis | None,
                     engine: AsyncEngine) -> SpendGuard | None:
    """With Redis, the audit log backs its spend: rebuilt from it, and bounded while away."""
    if redis is None:
        return None
    ledger = SpendLedger(redis, op_timeout_s=2 * settings.redis_timeout_s)
    return SpendGuard(ledger, AuditSpend(engine).spent, settings.budget_fail_open_share)
