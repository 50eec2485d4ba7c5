"""The reports the HTTP API serves, read from the database the composition root opened: the
handlers ask for a report, never for the engine behind it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.deployments.repository import DeclaredGpus
from gateway.reports.audit_rows import AuditQuery
from gateway.reports.build import (
    Scope,
    apis_report,
    audit_report,
    cost_report,
    economics_report,
    routes_report,
    savings_report,
)
from gateway.reports.page_data import PageData, ReportRange, load_page
from gateway.reports.periods import Period
from gateway.reports.render import ReportTable
from gateway.reports.rollup_repository import Dimension
from gateway.reports.tenant_cost import month_cost


class ReportReader:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def cost(self, period: Period, scope: Scope, by: Dimension,
                   declared: Sequence[DeclaredGpus]) -> ReportTable:
        return await cost_report(self._engine, period, scope, by, declared)

    async def savings(self, period: Period, scope: Scope, by: Dimension,
                      declared: Sequence[DeclaredGpus]) -> ReportTable:
        return await savings_report(self._engine, period, scope, by, declared)

    async def economics(self, period: Period, scope: Scope, declared: Sequence[DeclaredGpus],
                        zones: dict[str, str]) -> ReportTable:
        return await economics_report(self._engine, period, scope, declared, zones)

    async def audit(self, query: AuditQuery, scope: Scope) -> ReportTable:
        return await audit_report(self._engine, query, scope)

    async def routes(self, period: Period, scope: Scope) -> ReportTable:
        return await routes_report(self._engine, period, scope)

    async def apis(self, period: Period, scope: Scope) -> ReportTable:
        return await apis_report(self._engine, period, scope)

    async def page(self, rng: ReportRange, declared: Sequence[DeclaredGpus],
                   zones: dict[str, str]) -> PageData:
        return await load_page(self._engine, rng, declared, zones)

    async def month_cost(self, tenant_id: str, declared: Sequence[DeclaredGpus],
                         now: datetime) -> dict[str, Any]:
        return await month_cost(self._engine, tenant_id, declared, now)
