"""The cost report's shadow-judging line: what the strong and judge calls of shadow judging
cost in the period (request_outcomes), beside the traffic's own lines. Like idle GPUs it is
the operator's spend (shadow judging has its own budget), so one tenant's view has no such
line."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.db.outcome_tables import SHADOW, request_outcomes
from gateway.reports.breakdown import Line
from gateway.reports.periods import Period

SHADOW_LINE = "(shadow judging)"


async def shadow_line(conn: AsyncConnection, period: Period) -> Line | None:
    """requests: judgements attempted; api cost: what their calls cost (GPU time of a
    self-hosted strong or judge backend is priced at the policy's price, if it has one)."""
    o = request_outcomes
    found = (await conn.execute(
        select(func.count(), func.coalesce(func.sum(o.c.cost_micro_usd), 0))
        .where(o.c.source == SHADOW, o.c.ts >= period.since, o.c.ts < period.until)
    )).one()
    count, cost = int(found[0]), int(found[1])
    return Line(SHADOW_LINE, requests=count, api_micro_usd=cost) if count else None
