"""Every /admin route of the real app refuses a request without the admin key: no key, a
tenant's key, a wrong admin key (in every header the gateway reads keys from). The routes are
enumerated from the app, so a route added later is covered here without being listed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from tests.e2e.conftest import ADMIN_KEY, Gateway
from tests.security.routes import Endpoint, endpoints
from tests.support.servers import serve

# The login form is the way in for a browser: it is open by design, and its session opens the
# report page alone (tests/e2e/test_report_login.py); everything else needs the key.
LOGIN_ROUTES = {"/admin/login", "/admin/logout"}
ADMIN_ROUTES = [e for e in endpoints(create_app(Settings(admin_key="x")))
                if (e.path == "/admin" or e.path.startswith("/admin/"))
                and e.path not in LOGIN_ROUTES]
# Path parameters that name nothing: a request that got past the key check changes no state.
MISSING = {"name": "no-such-tenant", "key_id": "no-such-key", "scope": "tenant"}
LIMITS = {"budget": {"monthly_usd": 1.0}}


def send(gw: Gateway, endpoint: Endpoint, headers: dict[str, str]) -> httpx.Response:
    body = LIMITS if endpoint.method in ("PUT", "POST") else None
    return httpx.request(endpoint.method, gw.url + endpoint.url_path(**MISSING), json=body,
                         headers=headers, timeout=10)


def assert_refused(resp: httpx.Response) -> None:
    assert resp.status_code in (401, 403), (resp.status_code, resp.text[:300])
    error = resp.json()["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["type"] in ("authentication_error", "permission_error",
                             "invalid_request_error"), error


def test_the_admin_surface_is_what_the_app_serves() -> None:
    assert len(ADMIN_ROUTES) >= 15  # the walk found the admin routers, not nothing
    assert {e.method for e in ADMIN_ROUTES} >= {"GET", "POST", "PUT", "DELETE"}


@pytest.mark.parametrize("endpoint", ADMIN_ROUTES, ids=lambda e: f"{e.method} {e.path}")
def test_every_admin_route_needs_the_admin_key(gw: Gateway, endpoint: Endpoint) -> None:
    wrong = ADMIN_KEY + "-not"
    for headers in (
        {},
        {"authorization": f"Bearer {gw.key}"},  # a tenant's valid key
        {"x-api-key": gw.key},
        {"authorization": f"Bearer {wrong}"},
        {"authorization": f"Bearer {ADMIN_KEY[:-1]}"},  # a prefix of the right key
        {"x-api-key": wrong},
        {"api-key": wrong},
        {"authorization": f"Basic {ADMIN_KEY}"},  # the right key under the wrong scheme
        {"authorization": "Bearer"},
    ):
        assert_refused(send(gw, endpoint, headers))


@pytest.mark.parametrize("endpoint", ADMIN_ROUTES, ids=lambda e: f"{e.method} {e.path}")
def test_the_admin_key_gets_past_the_check(gw: Gateway, endpoint: Endpoint) -> None:
    resp = send(gw, endpoint, {"authorization": f"Bearer {ADMIN_KEY}"})
    # Past the key, a route may still refuse what it was asked (a missing tenant, a bad body),
    # but never for want of credentials.
    assert resp.status_code not in (401, 403), (resp.status_code, resp.text[:300])


def test_without_an_admin_key_configured_the_admin_api_is_off(tmp_path: Path) -> None:
    """No GATEWAY_ADMIN_KEY: no key at all opens the admin API, not even an empty one."""
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/gw.db",
                        audit_log_path=str(tmp_path / "a.jsonl"))
    with serve(create_app(settings)) as server:
        off = Gateway(server.url, "", "", tmp_path, {})
        for endpoint in ADMIN_ROUTES:
            for headers in ({}, {"authorization": "Bearer"}, {"x-api-key": ADMIN_KEY}):
                resp = send(off, endpoint, headers)
                assert_refused(resp)
                assert resp.json()["error"]["code"] == "admin_disabled"
