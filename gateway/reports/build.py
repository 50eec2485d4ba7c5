"""Each report from start to finish on one database connection: the parameters as the CLI or
HTTP edge received them, checked, queried and turned into a ReportTable. The edges resolve
tenant names and the policy; everything after that is here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.budget.pricing import format_usd
from gateway.deployments.gpu_repository import gpu_usage
from gateway.deployments.repository import DeclaredGpus, busy_minutes_by_day
from gateway.errors import InvalidRequest
from gateway.reports.audit_log_repository import audit_page, entry_traffic, task_routes
from gateway.reports.audit_rows import AuditQuery
from gateway.reports.breakdown import breakdown
from gateway.reports.cost_model import CostModel, price_range
from gateway.reports.economics import (
    BackendEconomics,
    backend_economics,
    gpu_paid,
    idle_sums,
)
from gateway.reports.entry_mix import entry_mix_table
from gateway.reports.gpus import spans_for
from gateway.reports.periods import Period
from gateway.reports.render import ReportTable
from gateway.reports.rollup_repository import (
    Dimension,
    RollupQuery,
    backend_sums,
    latency_histograms,
    usage_groups,
)
from gateway.reports.shadow_cost import shadow_line
from gateway.reports.tables import Meta, audit_table, cost_table, economics_table, savings_table
from gateway.reports.task_mix import task_mix_table

KINDS = ("cost", "economics", "savings", "audit", "routes", "apis")
DIMENSIONS = {
    "cost": tuple(Dimension),
    "savings": tuple(Dimension),
    "economics": (Dimension.BACKEND,),  # GPUs are paid per deployment, whoever uses them
    "audit": (),
    "routes": (),  # always by task type, then backend
    "apis": (),  # always by entry point
}
GPU_ATTRIBUTION = (
    "GPU-hours paid per deployment and UTC day; the busy share (paid minutes with traffic) "
    "split among that day's requests by tokens, the rest on the idle-GPU line"
)
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


async def price(conn: AsyncConnection, period: Period, now: datetime,
                declared: Sequence[DeclaredGpus]) -> CostModel:
    """The cost model over the whole UTC days the range reaches into (what the rollups keep),
    with GPUs paid up to now, not for the rest of a day that has not happened yet."""
    start, end = period.day_bounds()
    end = max(start, min(end, now))
    spans = await spans_for(conn, declared, start, end)
    busy = await busy_minutes_by_day(conn, spans, start, end)
    return price_range(start, end, await usage_groups(conn, period), spans, busy)


async def economics_lines(conn: AsyncConnection, period: Period, model: CostModel,
                          zones: dict[str, str]) -> list[BackendEconomics]:
    """Per backend, across tenants, with the GPU-hours the model says were paid."""
    query = RollupQuery(period, None, Dimension.BACKEND)
    sums = {s.backend: s for s in await backend_sums(conn, query)}
    histograms = await latency_histograms(conn, query)
    dcgm = await gpu_usage(conn, model.start, model.end)
    paid = gpu_paid(model.gpu_days)
    for name in paid:
        sums.setdefault(name, idle_sums(name, zones.get(name, "")))
    return [
        backend_economics(sums[name], histograms.get((name, "total"), {}),
                          histograms.get((name, "ttft"), {}), paid.get(name),
                          dcgm.get(name, (None, None)))
        for name in sorted(sums)
    ]


def _priced_meta(period: Period, scope: Scope, by: Dimension, model: CostModel) -> Meta:
    return (*_rollup_meta(period, scope, by), ("paid_until", model.end.isoformat()),
            ("gpu_attribution", GPU_ATTRIBUTION))


async def cost_report(engine: AsyncEngine, period: Period, scope: Scope, by: Dimension,
                      declared: Sequence[DeclaredGpus] = ()) -> ReportTable:
    async with engine.connect() as conn:
        model = await price(conn, period, scope.now, declared)
        shadow = await shadow_line(conn, period) if scope.tenant_id is None else None
    lines = breakdown(model, by, scope.tenant_id)
    return cost_table(by.value, [*lines, shadow] if shadow else lines,
                      _priced_meta(period, scope, by, model))


async def savings_report(engine: AsyncEngine, period: Period, scope: Scope, by: Dimension,
                         declared: Sequence[DeclaredGpus] = ()) -> ReportTable:
    async with engine.connect() as conn:
        model = await price(conn, period, scope.now, declared)
    return savings_table(by.value, breakdown(model, by, scope.tenant_id),
                         _priced_meta(period, scope, by, model))


async def economics_report(engine: AsyncEngine, period: Period, scope: Scope,
                           declared: Sequence[DeclaredGpus],
                           zones: dict[str, str]) -> ReportTable:
    """Deployments paid for in the range appear even when idle all of it. `zones` (from the
    policy) names the zone of a deployment that served nothing."""
    if scope.tenant_id is not None:
        raise InvalidRequest(
            "the economics report is per backend across tenants: GPUs are paid for whoever "
            "uses them (use the cost or savings report for one tenant)", param="tenant")
    async with engine.connect() as conn:
        model = await price(conn, period, scope.now, declared)
        lines = await economics_lines(conn, period, model, zones)
    meta = (*_priced_meta(period, scope, Dimension.BACKEND, model),
            ("gpu_cost_usd", format_usd(model.gpu_micro_usd)),
            ("idle_gpu_cost_usd", format_usd(model.idle_micro_usd)),
            ("api_cost_usd", format_usd(model.api_micro_usd)))
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


async def routes_report(engine: AsyncEngine, period: Period, scope: Scope) -> ReportTable:
    """The route mix by task type (from the audit log, exact to the instant asked)."""
    async with engine.connect() as conn:
        routes = await task_routes(conn, period, scope.tenant_id)
    meta: Meta = (("since", period.since.isoformat()), ("until", period.until.isoformat()),
                  ("tenant", scope.tenant_name), ("by", "task"))
    return task_mix_table(routes, meta)


async def apis_report(engine: AsyncEngine, period: Period, scope: Scope) -> ReportTable:
    """Traffic by entry point (from the audit log, exact to the instant asked)."""
    async with engine.connect() as conn:
        traffic = await entry_traffic(conn, period, scope.tenant_id)
    meta: Meta = (("since", period.since.isoformat()), ("until", period.until.isoformat()),
                  ("tenant", scope.tenant_name), ("by", "entry_point"))
    return entry_mix_table(traffic, meta)
