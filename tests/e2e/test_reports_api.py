"""Reports over HTTP through a real gateway: the admin key sees every tenant, a tenant's key
sees its own rows only, whatever it asks for; CSV parses; mistakes are OpenAI-shaped errors."""

from __future__ import annotations

import asyncio
import csv
import io
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.db.engine import create_engine
from gateway.tenancy.repository import TenantRepository
from tests.e2e.conftest import ADMIN_KEY, Gateway, create_key
from tests.support.audit_events import make_event

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
# Long before anything the other tests send: their rows never fall in this range.
DAY = 1_577_880_000.0  # 2020-01-01T12:00:00Z
RANGE = {"since": "2020-01-01", "until": "2020-01-02"}


@dataclass(frozen=True)
class Tenants:
    a_key: str
    b_key: str


def _store(db_url: str) -> None:
    async def main() -> None:
        engine = create_engine(db_url)
        try:
            repo = TenantRepository(engine)
            a, b = await repo.get_tenant("rep-a"), await repo.get_tenant("rep-b")
            assert a is not None and b is not None
            chain = Chain("e2e-reports")
            batch = [
                make_event(ts_unix_s=DAY + i, tenant_id=a.id, tenant_name="rep-a",
                           backend="sim-a", cost_micro_usd=100, task="code")
                for i in range(3)
            ] + [
                make_event(ts_unix_s=DAY + 86_400 + i, tenant_id=b.id, tenant_name="rep-b",
                           backend="sim-b", cost_micro_usd=1_000, sensitivity=("pii",))
                for i in range(2)
            ]
            await AuditRepository(engine).insert([chain.link(event_row(e)) for e in batch])
        finally:
            await engine.dispose()

    asyncio.run(main())


@pytest.fixture(scope="module")
def tenants(gateway: Gateway) -> Tenants:
    found = Tenants(create_key(gateway.db_url, "rep-a"), create_key(gateway.db_url, "rep-b"))
    _store(gateway.db_url)
    return found


def get(gw: Gateway, path: str, key: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{gw.url}{path}", params=params,
                     headers={"authorization": f"Bearer {key}"}, timeout=10)


def ok(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


def test_the_admin_sees_every_tenant(gw: Gateway, tenants: Tenants) -> None:
    body = ok(get(gw, "/admin/reports/cost", ADMIN_KEY, **RANGE))
    assert [(r["tenant"], r["requests"], r["cost_usd"]) for r in body["rows"]] == [
        ("rep-b", 2, "0.002000"), ("rep-a", 3, "0.000300")]
    one = ok(get(gw, "/admin/reports/cost", ADMIN_KEY, tenant="rep-a", by="day", **RANGE))
    assert [(r["day"], r["requests"]) for r in one["rows"]] == [("2020-01-01", 3)]
    savings = ok(get(gw, "/admin/reports/savings", ADMIN_KEY, **RANGE))
    assert savings["totals"]["sensitive_kept_home"] == 2
    economics = ok(get(gw, "/admin/reports/economics", ADMIN_KEY, **RANGE))
    served = {r["backend"]: r["requests"] for r in economics["rows"]}
    assert served == {"sim-a": 3, "sim-b": 2}


def test_audit_csv_parses_and_pages(gw: Gateway, tenants: Tenants) -> None:
    resp = get(gw, "/admin/reports/audit", ADMIN_KEY, format="csv", **RANGE)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(resp.text)))
    assert [r["tenant"] for r in rows] == ["rep-b"] * 2 + ["rep-a"] * 3
    assert rows[0]["cost_usd"] == "0.001000" and rows[0]["sensitivity"] == "pii"
    first = ok(get(gw, "/admin/reports/audit", ADMIN_KEY, limit=4, **RANGE))
    rest = ok(get(gw, "/admin/reports/audit", ADMIN_KEY, limit=4, cursor=first["next_cursor"],
                  **RANGE))
    assert len(first["rows"]) == 4 and len(rest["rows"]) == 1 and rest["next_cursor"] is None


def test_a_tenant_sees_only_its_own_rows(gw: Gateway, tenants: Tenants) -> None:
    for params in ({}, {"tenant": "rep-b"}, {"tenant": ""}, {"by": "tenant"},
                   {"tenant": "rep-b", "by": "backend"}):
        cost = ok(get(gw, "/v1/reports/cost", tenants.a_key, **RANGE, **params))
        assert cost["tenant"] == "rep-a"
        assert cost["totals"]["requests"] == 3 and cost["totals"]["cost_usd"] == "0.000300"
        savings = ok(get(gw, "/v1/reports/savings", tenants.a_key, **RANGE, **params))
        assert savings["totals"]["requests"] == 3
    for params in ({}, {"tenant": "rep-b"}, {"backend": "sim-b"}, {"limit": 1}):
        audit = ok(get(gw, "/v1/reports/audit", tenants.a_key, **RANGE, **params))
        assert {r["tenant"] for r in audit["rows"]} <= {"rep-a"}
    # A cursor from the admin's view of everyone still only pages through the caller's rows.
    admin_page = ok(get(gw, "/admin/reports/audit", ADMIN_KEY, limit=1, **RANGE))
    after = ok(get(gw, "/v1/reports/audit", tenants.a_key, cursor=admin_page["next_cursor"],
                   **RANGE))
    assert [r["tenant"] for r in after["rows"]] == ["rep-a"] * 3
    resp = get(gw, "/v1/reports/audit", tenants.b_key, format="csv", **RANGE)
    assert {r["tenant"] for r in csv.DictReader(io.StringIO(resp.text))} == {"rep-b"}


def test_who_may_ask_what(gw: Gateway, tenants: Tenants) -> None:
    for path in ("/admin/reports/cost", "/admin/reports/economics", "/admin/reports/audit"):
        assert get(gw, path, tenants.a_key).status_code == 401  # a tenant key is not the admin's
    missing = httpx.get(f"{gw.url}/v1/reports/cost", timeout=10)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "missing_api_key"
    # Who is asking is settled before any parameter is looked at.
    nonsense = httpx.get(f"{gw.url}/v1/reports/audit", params={"limit": "x", "format": "xml"},
                         timeout=10)
    assert nonsense.status_code == 401
    assert get(gw, "/v1/reports/economics", tenants.a_key).status_code == 404


@pytest.mark.parametrize(("path", "params", "param"), [
    ("/admin/reports/cost", {"since": "whenever"}, "since"),
    ("/admin/reports/cost", {"since": "2020-01-02", "until": "2020-01-01"}, "since"),
    ("/admin/reports/cost", {"by": "colour"}, "by"),
    ("/admin/reports/cost", {"format": "xml"}, "format"),
    ("/admin/reports/economics", {"by": "tenant"}, "by"),
    ("/admin/reports/economics", {"tenant": "rep-a"}, "tenant"),
    ("/admin/reports/audit", {"cursor": "nope"}, "cursor"),
    ("/admin/reports/audit", {"limit": "0"}, "limit"),
    ("/admin/reports/audit", {"by": "day"}, "by"),
])
def test_mistakes_are_openai_shaped(gw: Gateway, tenants: Tenants, path: str,
                                    params: dict[str, str], param: str) -> None:
    resp = get(gw, path, ADMIN_KEY, **params)
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param


def test_an_unknown_tenant_is_not_found(gw: Gateway, tenants: Tenants) -> None:
    resp = get(gw, "/admin/reports/savings", ADMIN_KEY, tenant="nobody")
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"


def test_the_route_mix_by_task(gw: Gateway, tenants: Tenants) -> None:
    everyone = ok(get(gw, "/admin/reports/routes", ADMIN_KEY, **RANGE))
    assert [(r["task"], r["backend"], r["requests"]) for r in everyone["rows"]] == [
        ("code", "sim-a", 3), ("(none)", "sim-b", 2)]
    own = ok(get(gw, "/v1/reports/routes", tenants.b_key, tenant="rep-a", **RANGE))
    assert [(r["task"], r["requests"]) for r in own["rows"]] == [("(none)", 2)]
    grouped = get(gw, "/admin/reports/routes", ADMIN_KEY, by="tenant", **RANGE)
    assert grouped.status_code == 400 and grouped.json()["error"]["param"] == "by"


def test_traffic_by_entry_point(gw: Gateway, tenants: Tenants) -> None:
    # Rows from before the entry point was recorded count by their endpoint (chat).
    everyone = ok(get(gw, "/admin/reports/apis", ADMIN_KEY, **RANGE))
    assert [(r["entry_point"], r["requests"]) for r in everyone["rows"]] == [("chat", 5)]
    own = ok(get(gw, "/v1/reports/apis", tenants.b_key, **RANGE))
    assert [(r["entry_point"], r["requests"]) for r in own["rows"]] == [("chat", 2)]
    grouped = get(gw, "/admin/reports/apis", ADMIN_KEY, by="tenant", **RANGE)
    assert grouped.status_code == 400 and grouped.json()["error"]["param"] == "by"
