"""Tenant A's key never reads tenant B's data through any tenant-facing route, whatever the
query says: B's name or id as a parameter, a cursor crafted from B's rows, B's tags. The GET
routes are enumerated from the app, so a report added later is probed here too."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.audit.records import ts_micros
from gateway.db.engine import create_engine
from gateway.reports.audit_rows import Cursor
from gateway.settings import Settings
from gateway.tenancy.repository import TenantRepository
from tests.e2e.conftest import ADMIN_KEY, Gateway, create_key
from tests.security.routes import Endpoint, endpoints

ALL_ROUTES = endpoints(create_app(Settings(admin_key="x")))
TENANT_GETS = [e for e in ALL_ROUTES if e.method == "GET" and e.path.startswith("/v1/")]
# Every other GET a tenant's key (or no key) can reach: health, models, docs, metrics (whose
# counters carry tenant names: it answers only the metrics or admin key).
OPEN_GETS = [pytest.param(e, id=e.path) for e in ALL_ROUTES
             if e.method == "GET" and not e.path.startswith(("/v1/", "/admin"))]


@dataclass(frozen=True)
class Tenant:
    name: str
    id: str
    key: str
    key_id: str
    request_ids: tuple[str, ...]

    def marks(self) -> set[str]:
        """Strings that appear in a response only if it carries this tenant's data."""
        return {self.name, self.id, self.key, self.key_id, *self.request_ids}


def _ids(db_url: str, name: str) -> tuple[str, str]:
    async def main() -> tuple[str, str]:
        engine = create_engine(db_url)
        try:
            repo = TenantRepository(engine)
            row = await repo.get_tenant(name)
            assert row is not None
            (key,) = [k for k in await repo.list_keys(row.name) if k.tenant_id == row.id]
            return row.id, key.id
        finally:
            await engine.dispose()

    return asyncio.run(main())


def _traffic(gw: Gateway, name: str) -> Tenant:
    key = create_key(gw.db_url, name)
    client = Gateway(gw.url, key, gw.db_url, gw.audit_path, gw.sims, gw.opened).client()
    request_ids = []
    for i, model in enumerate(["auto", "only-b", "auto"]):
        raw = client.chat.completions.with_raw_response.create(
            model=model, max_tokens=3, extra_headers={"x-gateway-tags": f"team-{name}"},
            messages=[{"role": "user", "content": f"{name} asks question {i}"}])
        raw.parse()
        request_ids.append(raw.headers["x-request-id"])
    tenant_id, key_id = _ids(gw.db_url, name)
    return Tenant(name, tenant_id, key, key_id, tuple(request_ids))


def get(gw: Gateway, path: str, key: str, params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.get(gw.url + path, params=params, timeout=10,
                     headers={"authorization": f"Bearer {key}", **(headers or {})})


def _audited(gw: Gateway, tenant: Tenant) -> list[dict[str, Any]]:
    """The admin's view of the tenant's audit rows, once the writer has flushed them all."""
    deadline = time.monotonic() + 15
    while True:
        rows: list[dict[str, Any]] = get(gw, "/admin/reports/audit", ADMIN_KEY,
                                         {"tenant": tenant.name}).json()["rows"]
        if {r["request_id"] for r in rows} >= set(tenant.request_ids):
            return rows
        assert time.monotonic() < deadline, "audit rows never arrived"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def pair(gateway: Gateway) -> tuple[Tenant, Tenant]:
    a, b = _traffic(gateway, "iso-a"), _traffic(gateway, "iso-b")
    for tenant in (a, b):
        _audited(gateway, tenant)
    return a, b


def _probes(b: Tenant, b_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Query strings that name B every way a report or usage route might listen to."""
    crafted = [Cursor(int(time.time() * 1e6) + 10**9, "", 0).encode()]
    for row in b_rows:  # just after each of B's rows, in B's own chain
        at = ts_micros(datetime.fromisoformat(row["ts"]))
        crafted += [Cursor(at + 1, row["chain_id"], row["seq"] + 1).encode(),
                    Cursor(at, row["chain_id"], row["seq"]).encode()]
    named = [{"tenant": b.name}, {"tenant": b.id}, {"tenant_id": b.id}, {"tenant_name": b.name},
             {"key_id": b.key_id}, {"key": b.key}, {"tags": f"team-{b.name}"},
             {"tenant": b.name, "by": "tenant"}, {"by": "tenant"}, {"by": "key"},
             {"by": "tag"}, {"tenant": [b.name, b.id]}, {"format": "csv", "tenant": b.name},
             {"request_id": b.request_ids[0]}, {"limit": 500}, {"since": "2000-01-01"}]
    return [{}, *named, *({"cursor": c} for c in crafted),
            *({"cursor": c, "tenant": b.name} for c in crafted)]


def assert_not_b(resp: httpx.Response, b: Tenant, what: str) -> None:
    """None of B's marks in the answer, other than what A itself sent (an error message may
    quote the tenant name A asked for; that tells A nothing it did not know)."""
    sent = str(resp.request.url) + " ".join(resp.request.headers.values())
    leaked = sorted(mark for mark in b.marks() if mark in resp.text and mark not in sent)
    assert not leaked, f"{what}: tenant A's key read B's {leaked}"


def test_the_probe_covers_every_tenant_get_route() -> None:
    paths = {e.path for e in TENANT_GETS}
    assert {"/v1/usage", "/v1/reports/cost", "/v1/reports/savings", "/v1/reports/audit",
            "/v1/models"} <= paths


def test_the_admin_sees_both_tenants(gw: Gateway, pair: tuple[Tenant, Tenant]) -> None:
    """The positive control: B's data is there to be leaked, under the marks the probe seeks."""
    a, b = pair
    for tenant in pair:
        text = get(gw, "/admin/reports/audit", ADMIN_KEY, {"tenant": tenant.name}).text
        assert all(rid in text for rid in tenant.request_ids)
    usage = get(gw, f"/admin/tenants/{b.name}/usage", ADMIN_KEY).text
    assert b.name in usage
    own = get(gw, "/v1/reports/audit", a.key).json()
    assert {r["request_id"] for r in own["rows"]} >= set(a.request_ids)


@pytest.mark.parametrize("endpoint", TENANT_GETS, ids=lambda e: e.path)
def test_a_tenants_key_never_reads_another_tenants_data(
    gw: Gateway, pair: tuple[Tenant, Tenant], endpoint: Endpoint
) -> None:
    a, b = pair
    b_rows = _audited(gw, b)
    path = endpoint.url_path(model=b.name)
    asks = [(params, {}) for params in _probes(b, b_rows)] + [
        ({}, headers) for headers in ({"x-gateway-tags": f"team-{b.name}"},
                                      {"x-gateway-tenant": b.name}, {"openai-organization": b.id})]
    for params, headers in asks:
        resp = get(gw, path, a.key, params, headers)
        assert resp.status_code < 500, (path, params, resp.text[:300])
        assert_not_b(resp, b, f"GET {path} {params} {headers}")


def test_a_tenants_audit_pages_never_cross_into_another_tenant(
    gw: Gateway, pair: tuple[Tenant, Tenant]
) -> None:
    """Paging from the admin's view of everyone, with A's key: only A's rows on every page."""
    a, b = pair
    cursor = get(gw, "/admin/reports/audit", ADMIN_KEY, {"limit": 1}).json()["next_cursor"]
    seen: set[str] = set()
    for _ in range(50):
        if cursor is None:
            break
        page = get(gw, "/v1/reports/audit", a.key, {"limit": 1, "cursor": cursor})
        assert_not_b(page, b, "paging")
        body = page.json()
        seen |= {r["tenant"] for r in body["rows"]}
        cursor = body["next_cursor"]
    assert seen <= {a.name}


@pytest.mark.parametrize("endpoint", OPEN_GETS)
def test_routes_outside_v1_tell_a_tenant_nothing_of_another(
    gw: Gateway, pair: tuple[Tenant, Tenant], endpoint: Endpoint
) -> None:
    a, b = pair
    path = endpoint.url_path(model=b.name)
    for key in (a.key, ""):
        resp = httpx.get(gw.url + path, timeout=10,
                         headers={"authorization": f"Bearer {key}"} if key else {})
        assert_not_b(resp, b, f"GET {path}")


def test_metrics_name_tenants_but_only_the_operator_reads_them(
    gw: Gateway, pair: tuple[Tenant, Tenant]
) -> None:
    """The positive control for /metrics above: B's name is in it, for the admin key."""
    a, b = pair
    assert get(gw, "/metrics", a.key).status_code == 401
    resp = get(gw, "/metrics", ADMIN_KEY)
    assert resp.status_code == 200 and f'tenant="{b.name}"' in resp.text
