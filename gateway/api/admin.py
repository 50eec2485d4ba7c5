"""Admin API (/admin/*): tenants, keys and policy reloads. Every call needs GATEWAY_ADMIN_KEY."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import orjson
from fastapi import APIRouter, Depends
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.requests import Request

from gateway.api.auth import require_admin_throttled
from gateway.api.parsing import parse_route_request
from gateway.api.parts import components_of
from gateway.components import Components
from gateway.errors import GatewayError, InvalidRequest, NotFound
from gateway.tenancy.names import TENANT_NAME_MAX, TENANT_NAME_PATTERN
from gateway.tenancy.repository import TenantExists
from gateway.types import ROUTED_ENDPOINTS, TenantContext


def admin_components(request: Request) -> Components:
    parts = components_of(request)
    require_admin_throttled(request, parts)
    return parts


Admin = Annotated[Components, Depends(admin_components)]
router = APIRouter(prefix="/admin", dependencies=[Depends(admin_components)])
API_ACTOR = "admin-api"


async def record_action(
    parts: Components, action: str, target: str, details: dict[str, object] | None = None
) -> None:
    """Into the admin chain, after the action succeeded (a failure to record is an error)."""
    await parts.admin_log.record(API_ACTOR, action, target, details)


class TenantIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=TENANT_NAME_MAX, pattern=TENANT_NAME_PATTERN)


def _utc(value: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes (stored as UTC); a JSON date-time needs its offset.
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


class TenantOut(BaseModel):
    id: str
    name: str
    enabled: bool
    created_at: Annotated[datetime, AfterValidator(_utc)]


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(default=None, max_length=128)


class KeyOut(BaseModel):
    id: str
    tenant: str
    prefix: str
    name: str | None
    created_at: Annotated[datetime, AfterValidator(_utc)]
    revoked_at: Annotated[datetime | None, AfterValidator(_utc)] = None
    key: str | None = Field(default=None, description="the key itself, returned once at creation")


@router.get("/tenants")
async def list_tenants(parts: Admin) -> list[TenantOut]:
    return [TenantOut(**vars_of(t)) for t in await parts.tenants.list_tenants()]


@router.post("/tenants", status_code=201)
async def create_tenant(body: TenantIn, parts: Admin) -> TenantOut:
    try:
        row = await parts.tenants.create_tenant(body.name)
    except TenantExists:
        raise GatewayError(f"tenant {body.name!r} already exists", status=409,
                           error_type="invalid_request_error", code="conflict") from None
    await record_action(parts, "tenant.create", row.name, {"tenant_id": row.id})
    return TenantOut(**vars_of(row))


@router.post("/tenants/{name}/disable")
async def disable_tenant(name: str, parts: Admin) -> dict[str, bool]:
    return await _set_enabled(parts, name, False)


@router.post("/tenants/{name}/enable")
async def enable_tenant(name: str, parts: Admin) -> dict[str, bool]:
    return await _set_enabled(parts, name, True)


async def _set_enabled(parts: Components, name: str, enabled: bool) -> dict[str, bool]:
    if not await parts.tenants.set_enabled(name, enabled):
        raise NotFound(f"no tenant named {name!r}")
    parts.authenticator.invalidate()
    await record_action(parts, "tenant.enable" if enabled else "tenant.disable", name)
    return {"enabled": enabled}


@router.post("/tenants/{name}/keys", status_code=201)
async def create_key(name: str, body: KeyIn, parts: Admin) -> KeyOut:
    tenant = await parts.tenants.get_tenant(name)
    if tenant is None:
        raise NotFound(f"no tenant named {name!r}")
    key, row = await parts.tenants.create_key(tenant, body.name)
    # The key's id and display prefix only: the key itself is never recorded.
    await record_action(parts, "key.create", name,
                        {"key_id": row.id, "prefix": row.prefix, "name": row.name})
    return KeyOut(id=row.id, tenant=row.tenant_name, prefix=row.prefix, name=row.name,
                  created_at=row.created_at, key=key)


@router.get("/keys")
async def list_keys(parts: Admin, tenant: str | None = None) -> list[KeyOut]:
    return [
        KeyOut(id=k.id, tenant=k.tenant_name, prefix=k.prefix, name=k.name,
               created_at=k.created_at, revoked_at=k.revoked_at)
        for k in await parts.tenants.list_keys(tenant)
    ]


@router.post("/keys/{key_id}/revoke")
async def revoke_key(key_id: str, parts: Admin) -> dict[str, bool]:
    if not await parts.tenants.revoke_key(key_id):
        raise NotFound(f"no active key with id {key_id!r}")
    parts.authenticator.invalidate()
    await record_action(parts, "key.revoke", key_id)
    return {"revoked": True}


class ExplainIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenant: str
    request: dict[str, object] = Field(description="the request body, as a client would send it")
    endpoint: str = "chat/completions"
    tags: list[str] = Field(default_factory=list)


@router.post("/policy/explain")
async def explain_route(body: ExplainIn, parts: Admin) -> dict[str, object]:
    """What the running gateway would do with this request, and why (nothing is sent)."""
    # Only what requests are routed as: the others (responses, messages) are only dispatched.
    endpoint = next((e for e in ROUTED_ENDPOINTS if e.value == body.endpoint), None)
    if endpoint is None:
        raise InvalidRequest(f"unknown endpoint {body.endpoint!r}", param="endpoint")
    try:
        raw = orjson.dumps(body.request)
    except TypeError:  # e.g. an integer wider than 64 bits: no client could send it on
        raise InvalidRequest("'request' holds a value JSON cannot carry",
                             param="request") from None
    route_request = parse_route_request(raw, endpoint, "explain", ",".join(body.tags) or None)
    row = await parts.tenants.get_tenant(body.tenant)
    tenant = TenantContext(row.id if row else body.tenant, body.tenant, "-")
    return await parts.explainer.explain(tenant, route_request)


@router.post("/policy/reload")
async def reload_policy(parts: Admin) -> dict[str, object]:
    if not parts.policy.reload():
        raise InvalidRequest("the policy file does not validate; the running policy is kept "
                             "(run `gateway policy check` for the details)")
    return {"reloaded": True, "models": parts.policy.current.public_models()}


def vars_of(row: object) -> dict[str, object]:
    return {name: getattr(row, name) for name in row.__slots__}  # type: ignore[attr-defined]
