"""Reports over HTTP: `/admin/reports/{cost|economics|savings|audit}` with the admin key, for
any tenant or all; `/v1/reports/{cost|savings|audit}` with a tenant's own key, which only ever
sees that tenant's rows whatever the parameters say. JSON by default, CSV with format=csv."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from gateway.api.admin import Admin, admin_components
from gateway.api.auth import authenticate_tenant
from gateway.api.parts import Parts
from gateway.components import Components
from gateway.errors import InvalidRequest, NotFound
from gateway.reports.audit_rows import DEFAULT_LIMIT, AuditQuery, Cursor, check_limit
from gateway.reports.build import Scope, dimension
from gateway.reports.gpus import declared_gpus
from gateway.reports.periods import Period, parse_period
from gateway.reports.render import Format, ReportTable, to_csv, to_json
from gateway.reports.rollup_repository import Dimension

admin_router = APIRouter(prefix="/admin/reports", dependencies=[Depends(admin_components)])
tenant_router = APIRouter(prefix="/v1/reports")


@dataclass(frozen=True, slots=True)
class Asked:
    """The parameters every report takes, as received."""

    since: str | None
    until: str | None
    by: str | None
    fmt: Format

    def period(self, scope: Scope) -> Period:
        return parse_period(self.since, self.until, scope.now)

    def grouping(self, kind: str) -> Dimension:
        found = dimension(kind, self.by)
        assert found is not None  # every grouped report has a default
        return found

    def ungrouped(self, kind: str) -> None:
        dimension(kind, self.by)  # refuses any `by` for a report that lists rows


def asked(
    since: str | None = None, until: str | None = None, by: str | None = None,
    fmt: Annotated[str, Query(alias="format")] = "json",
) -> Asked:
    if fmt not in (Format.JSON, Format.CSV):
        raise InvalidRequest(f"format must be json or csv, not {fmt!r}", param="format")
    return Asked(since, until, by, Format(fmt))


@dataclass(frozen=True, slots=True)
class AuditFilters:
    backend: str | None = None
    model: str | None = None
    rule: str | None = None
    outcome: str | None = None
    limit: int = DEFAULT_LIMIT
    cursor: str | None = None

    def query(self, period: Period) -> AuditQuery:
        cursor = Cursor.decode(self.cursor) if self.cursor else None
        return AuditQuery(period, None, self.backend, self.model, self.rule, self.outcome,
                          check_limit(self.limit), cursor)


Params = Annotated[Asked, Depends(asked)]
Filters = Annotated[AuditFilters, Depends(AuditFilters)]


def _respond(table: ReportTable, fmt: Format) -> Response:
    if fmt is Format.CSV:
        return Response(to_csv(table), media_type="text/csv; charset=utf-8")
    return Response(to_json(table), media_type="application/json")


async def _admin_scope(parts: Components, tenant: str | None) -> Scope:
    now = datetime.now(UTC)
    if tenant is None:
        return Scope(None, None, now)
    row = await parts.tenants.get_tenant(tenant)
    if row is None:
        raise NotFound(f"no tenant named {tenant!r}")
    return Scope(row.id, row.name, now)


async def _own_scope(request: Request, parts: Parts) -> tuple[Components, Scope]:
    """The caller's tenant from its key: the only scope a tenant route ever reads."""
    tenant = await authenticate_tenant(request, parts.authenticator)
    return parts, Scope(tenant.tenant_id, tenant.tenant_name, datetime.now(UTC))


# Declared first in each tenant route: who is asking is settled before any parameter is read.
Own = Annotated[tuple[Components, Scope], Depends(_own_scope)]


@admin_router.get("/cost")
async def admin_cost(parts: Admin, params: Params, tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    table = await parts.reports.cost(params.period(scope), scope, params.grouping("cost"),
                                     declared_gpus(parts.policy.current))
    return _respond(table, params.fmt)


@admin_router.get("/savings")
async def admin_savings(parts: Admin, params: Params, tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    table = await parts.reports.savings(params.period(scope), scope, params.grouping("savings"),
                                        declared_gpus(parts.policy.current))
    return _respond(table, params.fmt)


@admin_router.get("/economics")
async def admin_economics(parts: Admin, params: Params, tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    params.grouping("economics")  # refuses any other grouping
    policy = parts.policy.current
    zones = {name: b.zone for name, b in policy.backends.items()}
    table = await parts.reports.economics(params.period(scope), scope, declared_gpus(policy),
                                          zones)
    return _respond(table, params.fmt)


@admin_router.get("/audit")
async def admin_audit(parts: Admin, params: Params, filters: Filters,
                      tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    params.ungrouped("audit")
    table = await parts.reports.audit(filters.query(params.period(scope)), scope)
    return _respond(table, params.fmt)


@admin_router.get("/routes")
async def admin_routes(parts: Admin, params: Params, tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    params.ungrouped("routes")  # always by task type, then backend
    return _respond(await parts.reports.routes(params.period(scope), scope), params.fmt)


@admin_router.get("/apis")
async def admin_apis(parts: Admin, params: Params, tenant: str | None = None) -> Response:
    scope = await _admin_scope(parts, tenant)
    params.ungrouped("apis")  # always by entry point
    return _respond(await parts.reports.apis(params.period(scope), scope), params.fmt)


@tenant_router.get("/cost")
async def own_cost(own: Own, params: Params) -> Response:
    parts, scope = own
    table = await parts.reports.cost(params.period(scope), scope, params.grouping("cost"),
                                     declared_gpus(parts.policy.current))
    return _respond(table, params.fmt)


@tenant_router.get("/savings")
async def own_savings(own: Own, params: Params) -> Response:
    parts, scope = own
    table = await parts.reports.savings(params.period(scope), scope, params.grouping("savings"),
                                        declared_gpus(parts.policy.current))
    return _respond(table, params.fmt)


@tenant_router.get("/audit")
async def own_audit(own: Own, params: Params, filters: Filters) -> Response:
    parts, scope = own
    params.ungrouped("audit")
    table = await parts.reports.audit(filters.query(params.period(scope)), scope)
    return _respond(table, params.fmt)


@tenant_router.get("/apis")
async def own_apis(own: Own, params: Params) -> Response:
    parts, scope = own
    params.ungrouped("apis")
    return _respond(await parts.reports.apis(params.period(scope), scope), params.fmt)


@tenant_router.get("/routes")
async def own_routes(own: Own, params: Params) -> Response:
    parts, scope = own
    params.ungrouped("routes")
    return _respond(await parts.reports.routes(params.period(scope), scope), params.fmt)


router = APIRouter()  # both, for the composition root to include at once
router.include_router(admin_router)
router.include_router(tenant_router)
