"""A tenant's spend so far this UTC day and month, read from the audit log: the source of truth
the budget store (Redis) is rebuilt from when it lost or missed spend."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.audit_tables import audit_log


def period_start(period: str) -> datetime:
    """The first instant of a day ("YYYY-MM-DD") or month ("YYYY-MM") period, in UTC."""
    parts = [int(p) for p in period.split("-")]
    year, month, day = [*parts, 1][:3]
    return datetime.fromtimestamp(calendar.timegm((year, month, day, 0, 0, 0)), UTC)


class AuditSpend:
    """Sums of the audit rows' cost (every answered request's, unmetered ones included)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def spent(self, tenant_id: str, day: str, month: str) -> tuple[int, int]:
        """(day, month) micro-USD the tenant's audited requests cost in those periods."""
        c = audit_log.c
        day_start = period_start(day)
        query = (
            select(func.coalesce(func.sum(case((c.ts >= day_start, c.cost_micro_usd),
                                               else_=0)), 0),
                   func.coalesce(func.sum(c.cost_micro_usd), 0))
            .where(c.tenant_id == tenant_id, c.ts >= period_start(month))
        )
        async with self._engine.connect() as conn:
            row = (await conn.execute(query)).one()
        return int(row[0]), int(row[1])
