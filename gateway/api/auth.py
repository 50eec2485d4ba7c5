"""Authentication at the edge: tenant bearer keys, the admin key and the metrics key."""

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
            "the admin API is disabled: set GATEWAY_ADMIN_KEY_FILE (or GATEWAY_ADMIN_KEY) to "
            "enable it", code="admin_disabled"
        )
    token = bearer_token(request)
    if token is None:
        raise AuthenticationFailed("the admin API needs the admin key", code="missing_api_key")
    if not key_matches(token, admin_key):
        raise AuthenticationFailed("Incorrect admin key provided.")


def require_metrics_reader(
    request: Request, metrics_key: str | None, admin_key: str | None
) -> None:
    """/metrics labels usage with tenant names, so it needs the metrics key (what a
    Prometheus server is given) or the admin key; with neither configured it is closed."""
    keys = [key for key in (metrics_key, admin_key) if key]
    if not keys:
        raise AuthenticationFailed(
            "/metrics is disabled: give the gateway a metrics key (GATEWAY_METRICS_KEY_FILE or "
            "GATEWAY_METRICS_KEY; the admin key works too) and scrape with "
            "'Authorization: Bearer <key>'", code="metrics_disabled")
    token = bearer_token(request)
    if token is None:
        raise AuthenticationFailed("/metrics needs the metrics key or the admin key",
                                   code="missing_api_key")
    # Both keys are compared, whichever matches, so the timing tells nothing about either.
    if not sum(key_matches(token, key) for key in keys):
        raise AuthenticationFailed("Incorrect metrics key provided.")


def key_matches(token: str, key: str) -> bool:
    """Constant-time comparison: how long it takes says nothing about how much matched."""
    return hmac.compare_digest(token.encode(), key.encode())
