"""Budgets and usage over HTTP: `GET /v1/usage` for a tenant's own key, and the admin API to
set and read any tenant's budgets and limits (`/admin/tenants/{name}/limits|usage`)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict
from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request

from gateway.api.admin import Admin, admin_components, record_action
from gateway.api.auth import authenticate_tenant
from gateway.api.parts import Parts
from gateway.budget.limits import BudgetUnavailable, check_scope
from gateway.components import Components
from gateway.errors import BudgetStoreUnavailable, DatabaseUnavailable, InvalidRequest, NotFound
from gateway.policy.schema import BudgetSpec, LimitsSpec
from gateway.reports.gpus import declared_gpus
from gateway.routing.usage import usage_report
from gateway.types import TenantContext

log = logging.getLogger("gateway")
tenant_router = APIRouter()
admin_router = APIRouter(prefix="/admin", dependencies=[Depends(admin_components)])


class ScopeLimitsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    budget: BudgetSpec | None = None
    limits: LimitsSpec | None = None


@tenant_router.get("/v1/usage")
async def own_usage(request: Request, parts: Parts) -> dict[str, Any]:
    """The caller's tenant and key: spend today and this month, reservations, what is left,
    and the month's cost as the reports price it. A key sees its own tenant only; there is no
    parameter to ask for another."""
    tenant = await authenticate_tenant(request, parts.authenticator)
    report = await _report(parts, tenant, request.headers.get("x-gateway-tags"))
    return {**report, "cost_this_month": await _month_cost(parts, tenant.tenant_id)}


@admin_router.get("/tenants/{name}/usage")
async def tenant_usage(name: str, parts: Admin, key_id: str | None = None,
                       tags: str | None = None) -> dict[str, Any]:
    row = await parts.tenants.get_tenant(name)
    if row is None:
        raise NotFound(f"no tenant named {name!r}")
    tenant = TenantContext(row.id, row.name, key_id or "-", row.enabled)
    report = await _report(parts, tenant, tags)
    report["cost_this_month"] = await _month_cost(parts, row.id)
    if key_id is None:
        report["scopes"] = [s for s in report["scopes"] if not s["scope"].startswith("key:")]
    return report


@admin_router.get("/tenants/{name}/limits")
async def tenant_limits(name: str, parts: Admin) -> dict[str, Any]:
    row = await parts.tenants.get_tenant(name)
    if row is None:
        raise NotFound(f"no tenant named {name!r}")
    spec = parts.policy.current.tenant_specs.get(name)
    overrides = await parts.limits_repo.overrides(row.id)
    return {
        "tenant": name,
        "policy": spec.model_dump(exclude={"models"}, exclude_none=True) if spec else {},
        "overrides": {
            scope: {"budget": budget, "limits": limits}
            for scope, (budget, limits) in sorted(overrides.items())
        },
    }


@admin_router.put("/tenants/{name}/limits/{scope}")
async def set_limits(name: str, scope: str, body: ScopeLimitsIn, parts: Admin) -> dict[str, Any]:
    """Replace one scope's budget and limits ("tenant", "key:<key id>" or "tag:<tag>");
    every replica applies it within GATEWAY_LIMITS_CACHE_TTL_S."""
    row = await _scoped(parts, name, scope)
    budget = body.budget.model_dump(exclude_none=True) if body.budget else None
    limits = body.limits.model_dump(exclude_none=True) if body.limits else None
    await parts.limits_repo.put(row, scope, budget, limits)
    parts.limits.invalidate(row)
    await record_action(parts, "limits.set", f"{name}/{scope}",
                        {"budget": budget, "limits": limits})
    return {"tenant": name, "scope": scope, "budget": budget, "limits": limits}


@admin_router.delete("/tenants/{name}/limits/{scope}")
async def clear_limits(name: str, scope: str, parts: Admin) -> dict[str, bool]:
    """Drop the override: the policy file's setting applies again."""
    row = await _scoped(parts, name, scope)
    removed = await parts.limits_repo.remove(row, scope)
    parts.limits.invalidate(row)
    if removed:
        await record_action(parts, "limits.clear", f"{name}/{scope}")
    return {"removed": removed}


async def _month_cost(parts: Components, tenant_id: str) -> dict[str, Any] | None:
    """The cost model's month so far (budgets above are what was charged against limits, at
    the prices used to enforce them). None while the database cannot answer: budgets live in
    Redis and still answer."""
    try:
        return await parts.reports.month_cost(tenant_id, declared_gpus(parts.policy.current),
                                              datetime.now(UTC))
    except (DatabaseUnavailable, SQLAlchemyError, OSError):
        log.warning("usage: the month's cost could not be read from the database")
        return None


async def _scoped(parts: Components, name: str, scope: str) -> str:
    try:
        check_scope(scope)
    except ValueError as exc:
        raise InvalidRequest(str(exc), param="scope") from None
    row = await parts.tenants.get_tenant(name)
    if row is None:
        raise NotFound(f"no tenant named {name!r}")
    return row.id


async def _report(parts: Components, tenant: TenantContext, tags: str | None) -> dict[str, Any]:
    tag_list = tuple(t.strip() for t in tags.split(",") if t.strip()) if tags else ()
    scopes = await parts.limits.scopes(parts.policy.current, tenant, tag_list)
    try:
        report = await usage_report(parts.budget_store, tenant.tenant_id, scopes)
    except BudgetUnavailable as exc:
        raise BudgetStoreUnavailable(
            "The budget service is unavailable; usage cannot be read right now."
        ) from exc
    return {"tenant": tenant.tenant_name, **report}
