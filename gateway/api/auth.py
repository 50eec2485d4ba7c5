"""Authentication at the edge: tenant bearer keys and the admin key."""

from __future__ import annotations

import hmac

from starlette.requests import Request

from gateway.errors import AuthenticationFailed, PermissionDenied
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.types import TenantContext


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return request.headers.get("x-api-key") or request.headers.get("api-key")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def authenticate_tenant(request: Request, authenticator: KeyAuthenticator) -> TenantContext:
    token = bearer_token(request)
    if token is None:
        raise AuthenticationFailed(
            "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'.",
            code="missing_api_key",
        )
    tenant = await authenticator.authenticate(token)
    if tenant is None:
        raise AuthenticationFailed("Incorrect API key provided.")
    if not tenant.enabled:
        raise PermissionDenied(
            f"tenant {tenant.tenant_name!r} is disabled", code="tenant_disabled"
        )
    return tenant


def require_admin(request: Request, admin_key: str | None) -> None:
    if not admin_key:
        raise PermissionDenied(
            "the admin API is disabled: set GATEWAY_ADMIN_KEY to enable it", code="admin_disabled"
        )
    token = bearer_token(request)
    if token is None:
        raise AuthenticationFailed("the admin API needs the admin key", code="missing_api_key")
    if not hmac.compare_digest(token.encode(), admin_key.encode()):
        raise AuthenticationFailed("Incorrect admin key provided.")
