"""Each report from start to finish on one database connection: the parameters as the CLI or
HTTP edge received them, checked, queried and turned into a ReportTable. The edges resolve
tenant names and the policy; everything after that is here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.errors import InvalidRequest
from gateway.reports.audit_rows import AuditQuery, audit_page
from gateway.reports.economics import GpuFacts, backend_economics, idle_sums
from gateway.reports.periods import Period
from gateway.reports.queries import (
    Dimension,
    RollupQuery,
    backend_sums,
    busy_minutes,
    cost_lines,
    latency_histograms,
    savings_lines,
)
from gateway.reports.render import ReportTable
from gateway.reports.tables import Meta, audit_table, cost_table, economics_table, savings_table

KINDS = ("cost", "economics", "savings", "audit")
DIMENSIONS = {
    "cost": tuple(Dimension),
    "savings": tuple(Dimension),
    "economics": (Dimension.BACKEND,),  # GPUs are paid per deployment, whoever uses them
    "audit": (),
}
DEFAULT_BY = {"cost": Dimension.TENANT, "savings": Dimension.TENANT,
              "economics": Dimension.BACKEND}


def dimension(kind: str, by: str | None) -> Dimension | None:
    allowed = DIMENSIONS[kind]
    if by is None:
        return DEFAULT_BY.get(kind)
    if by not in {d.value for d in allowed}:
        choices = "|".join(d.value for d in allowed) or "nothing (it lists rows)"
        raise InvalidRequest(f"the {kind} report groups by {choices}, not {by!r}", param="by")
    return Dimension(by)


@dataclass(frozen=True, slots=True)
class Scope:
    """Who asked about what: the tenant (resolved by the edge) and when 'now' is."""

    tenant_id: str | None
    tenant_name: str | None
    now: datetime


def _rollup_meta(period: Period, scope: Scope, by: Dimension) -> Meta:
    # The rollups keep whole UTC days: say which days the numbers cover.
    start, end = period.day_bounds()
    return (("since", start.isoformat()), ("until", end.isoformat()),
            ("tenant", scope.tenant_name), ("by", by.value))


async def cost_report(engine: AsyncEngine, period: Period, scope: Scope,
                      by: Dimension) -> ReportTable:
    async with engine.connect() as conn:
        lines = await cost_lines(conn, RollupQuery(period, scope.tenant_id, by))
    return cost_table(by.value, lines, _rollup_meta(period, scope, by))


async def savings_report(engine: AsyncEngine, period: Period, scope: Scope,
                         by: Dimension) -> ReportTable:
    async with engine.connect() as conn:
        lines = await savings_lines(conn, RollupQuery(period, scope.tenant_id, by))
    return savings_table(by.value, lines, _rollup_meta(period, scope, by))


async def economics_report(engine: AsyncEngine, period: Period, scope: Scope,
                           gpus: dict[str, GpuFacts], zones: dict[str, str]) -> ReportTable:
    """`gpus` and `zones` come from the running policy: deployments with GPUs appear even when
    idle all range, since they were paid for all the same."""
    if scope.tenant_id is not None:
        raise InvalidRequest(
            "the economics report is per backend across tenants: GPUs are paid for whoever "
            "uses them (use the cost or savings report for one tenant)", param="tenant")
    query = RollupQuery(period, None, Dimension.BACKEND)
    start, end = period.day_bounds()
    async with engine.connect() as conn:
        sums = {s.backend: s for s in await backend_sums(conn, query)}
        histograms = await latency_histograms(conn, query)
        busy = await busy_minutes(conn, start, end)
    for name in gpus:
        sums.setdefault(name, idle_sums(name, zones.get(name, "")))
    # GPUs cost money up to now, not for the rest of a day that has not happened yet.
    paid_hours = max(0.0, (min(end, scope.now) - start).total_seconds() / 3600)
    lines = [
        backend_economics(sums[name], histograms.get((name, "total"), {}),
                          histograms.get((name, "ttft"), {}), busy.get(name, 0),
                          gpus.get(name), paid_hours)
        for name in sorted(sums)
    ]
    meta = (*_rollup_meta(period, scope, Dimension.BACKEND), ("hours_paid", f"{paid_hours:.2f}"))
    return economics_table(lines, meta)


async def audit_report(engine: AsyncEngine, query: AuditQuery, scope: Scope) -> ReportTable:
    # The scope's tenant, whatever the query said: a tenant's key can only ever see its own.
    query = replace(query, tenant_id=scope.tenant_id)
    async with engine.connect() as conn:
        page = await audit_page(conn, query)
    meta: Meta = (
        ("since", query.period.since.isoformat()), ("until", query.period.until.isoformat()),
        ("tenant", scope.tenant_name),
        ("next_cursor", page.next_cursor.encode() if page.next_cursor else None),
    )
    return audit_table(page.rows, meta)
