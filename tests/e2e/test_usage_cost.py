"""GET /v1/usage carries the month's cost as the reports price it, for the key's own tenant:
the same figure the cost report gives for that tenant."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import httpx

from gateway.budget.pricing import format_usd
from gateway.db.engine import create_engine
from gateway.reports.build import Scope, cost_report
from gateway.reports.periods import Period
from gateway.reports.rollup_repository import Dimension
from gateway.tenancy.repository import TenantRepository
from tests.e2e.conftest import HELLO_BODY, Gateway


def usage(gw: Gateway) -> dict[str, object]:
    resp = httpx.get(f"{gw.url}/v1/usage", headers={"authorization": f"Bearer {gw.key}"})
    assert resp.status_code == 200, resp.text
    body: dict[str, object] = resp.json()
    return body


def reported_cost(gw: Gateway, tenant: str) -> int:
    """What `gateway report cost --tenant` says the month so far cost."""
    async def read() -> int:
        engine = create_engine(gw.db_url)
        try:
            row = await TenantRepository(engine).get_tenant(tenant)
            assert row is not None
            tenant_id = row.id
            now = datetime.now(UTC)
            first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            table = await cost_report(engine, Period(first, now), Scope(tenant_id, None, now),
                                      Dimension.TENANT)
        finally:
            await engine.dispose()
        assert table.totals is not None
        return int(table.totals[-1] or 0)

    return asyncio.run(read())


def test_usage_says_what_the_month_cost_as_the_reports_do(gw: Gateway) -> None:
    before = usage(gw)["cost_this_month"]
    assert isinstance(before, dict)
    reply = gw.client().chat.completions.with_raw_response.create(
        model="auto", max_tokens=5, **HELLO_BODY)  # type: ignore[arg-type]
    cost = float(reply.headers["x-gateway-cost-usd"])
    deadline = time.monotonic() + 10
    while True:  # the audit writer batches: wait for the row to land
        after = usage(gw)["cost_this_month"]
        assert isinstance(after, dict)
        if after["requests"] == before["requests"] + 1:
            break
        assert time.monotonic() < deadline, after
        time.sleep(0.1)
    assert float(after["cost_usd"]) == round(float(before["cost_usd"]) + cost, 6)
    assert after["cost_usd"] == format_usd(reported_cost(gw, "acme"))
    # The savings split: a tenant carries no idle GPUs, so its saving is all routing's.
    assert after["idle_gpu_usd"] == "0.000000" and "not attributed" in after["idle_gpu_note"]
    assert after["routing_saved_usd"] == after["saved_usd"] == format_usd(
        round((float(after["baseline_usd"]) - float(after["cost_usd"])) * 1e6))
