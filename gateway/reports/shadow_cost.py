"""The cost report's shadow-judging line: what the strong and judge calls of shadow judging
cost in the period (request_outcomes), beside the traffic's own lines. Like idle GPUs it is
the operator's spend (shadow judging has its own budget), so one tenant's view has no such
line."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.outcomes.repository import shadow_judging_totals
from gateway.reports.breakdown import Line
from gateway.reports.periods import Period

SHADOW_LINE = "(shadow judging)"


async def shadow_line(conn: AsyncConnection, period: Period) -> Line | None:
    """requests: judgements attempted; api cost: what their calls cost (GPU time of a
    self-hosted strong or judge backend is priced at the policy's price, if it has one)."""
    count, cost = await shadow_judging_totals(conn, period.since, period.until)
    return Line(SHADOW_LINE, requests=count, api_micro_usd=cost) if count else None
