"""Authentication at the edge: tenant bearer keys, the admin key and the metrics key."""

from __future__ import annotations

import hmac
import logging

from starlette.requests import Request

from gateway.components import Components
from gateway.errors import AuthenticationFailed, PermissionDenied, RateLimited
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.login_throttle import retry_after
from gateway.types import TenantContext

log = logging.getLogger(__name__)


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


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def require_admin_throttled(request: Request, parts: Components) -> None:
    """require_admin behind the wrong-key back-off: while this address (or every address)
    must wait, a 429 with Retry-After, the key not even compared."""
    address = client_address(request)
    wait = parts.login_throttle.wait_s(address)
    if wait > 0:
        refuse_throttled(parts, address, wait)
    try:
        require_admin(request, parts.secrets.admin_key)
    except AuthenticationFailed as exc:
        if exc.code != "missing_api_key":
            admin_key_failed(parts, address)
        raise
    parts.login_throttle.succeeded(address)


def admin_key_failed(parts: Components, address: str) -> None:
    parts.metrics.admin_auth_failures.labels(outcome="wrong_key").inc()
    wait = parts.login_throttle.failed(address)
    if wait > 0:
        log.warning("wrong admin key from %s; its next try waits %.0f s", address, wait)


def refuse_throttled(parts: Components, address: str, wait_s: float) -> None:
    parts.metrics.admin_auth_failures.labels(outcome="throttled").inc()
    raise RateLimited(
        f"Too many wrong admin keys; try again in {retry_after(wait_s)} s.",
        code="admin_login_throttled", headers={"retry-after": retry_after(wait_s)})


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
