"""Report queries over a large synthetic audit history: each report the CLI and admin API
serve, timed repeatedly (p50/p95), plus the same daily-cost question asked of the raw log to
show what the rollup saves."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.reports.audit_log_repository import audit_page
from gateway.reports.audit_rows import AuditQuery
from gateway.reports.breakdown import breakdown
from gateway.reports.build import price
from gateway.reports.periods import Period
from gateway.reports.rollup_repository import (
    Dimension,
    RollupQuery,
    backend_sums,
    latency_histograms,
)

Query = Callable[[AsyncConnection], Awaitable[int]]  # returns rows answered


def _period(until: date, days: int) -> Period:
    end = datetime(until.year, until.month, until.day, tzinfo=UTC)
    return Period(end - timedelta(days=days), end)


def queries(until: date, days: int) -> list[tuple[str, Query]]:
    period = _period(until, days)

    def rollup(by: Dimension, tenant: str | None = None) -> RollupQuery:
        return RollupQuery(period, tenant_id=tenant, by=by)

    now = datetime.now(UTC)

    async def priced(conn: AsyncConnection, by: Dimension, tenant: str | None = None) -> int:
        # The cost model every cost and savings report reads, broken down one way.
        return len(breakdown(await price(conn, period, now, ()), by, tenant))

    async def daily_cost_one_tenant(conn: AsyncConnection) -> int:
        return await priced(conn, Dimension.DAY, "t7")

    async def daily_cost_by_tenant(conn: AsyncConnection) -> int:
        # Every tenant's cost for every day: one rollup scan grouped by day and tenant.
        found = await conn.execute(text(
            "SELECT day, tenant_id, sum(cost_micro_usd), sum(prompt_tokens + completion_tokens)"
            " FROM audit_daily WHERE day >= :a AND day < :b GROUP BY day, tenant_id"
        ), {"a": period.since.date(), "b": period.until.date()})
        return len(found.all())

    async def cost_by_tenant(conn: AsyncConnection) -> int:
        return await priced(conn, Dimension.TENANT)

    async def cost_by_rule(conn: AsyncConnection) -> int:
        return await priced(conn, Dimension.RULE)

    async def savings_by_tenant(conn: AsyncConnection) -> int:
        return await priced(conn, Dimension.TENANT)  # the same model, other columns

    async def economics(conn: AsyncConnection) -> int:
        sums = await backend_sums(conn, rollup(Dimension.BACKEND))
        await latency_histograms(conn, rollup(Dimension.BACKEND))
        return len(sums)

    async def audit_first_page(conn: AsyncConnection) -> int:
        return len((await audit_page(conn, AuditQuery(period, tenant_id="t7", limit=100))).rows)

    async def audit_filtered_page(conn: AsyncConnection) -> int:
        query = AuditQuery(period, tenant_id="t7", backend="claude", outcome="error", limit=100)
        return len((await audit_page(conn, query)).rows)

    async def raw_log_daily_cost(conn: AsyncConnection) -> int:
        found = await conn.execute(text(
            "SELECT (ts AT TIME ZONE 'UTC')::date, tenant_id, sum(cost_micro_usd)"
            " FROM audit_log WHERE ts >= :a AND ts < :b GROUP BY 1, 2"
        ), {"a": period.since, "b": period.until})
        return len(found.all())

    return [
        ("daily cost, one tenant (rollup)", daily_cost_one_tenant),
        ("daily cost by tenant (rollup)", daily_cost_by_tenant),
        ("cost by tenant (rollup)", cost_by_tenant),
        ("cost by rule (rollup)", cost_by_rule),
        ("savings by tenant (rollup)", savings_by_tenant),
        ("economics: sums + latency histograms", economics),
        ("audit rows: first page, one tenant", audit_first_page),
        ("audit rows: tenant + backend + errors", audit_filtered_page),
        ("daily cost by tenant (raw log, no rollup)", raw_log_daily_cost),
    ]


async def time_queries(
    engine: AsyncEngine, until: date, days: int, repeats: int, slow_repeats: int
) -> list[list[str]]:
    table = []
    for label, query in queries(until, days):
        runs = slow_repeats if "raw log" in label else repeats
        samples = []
        answered = 0
        async with engine.connect() as conn:
            await query(conn)  # warm: plan cache and buffers, as a running service has them
            for _ in range(runs):
                started = time.perf_counter()
                answered = await query(conn)
                samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
        table.append([label, str(answered), str(runs), f"{statistics.median(samples):.1f}",
                      f"{p95:.1f}"])
    return table
