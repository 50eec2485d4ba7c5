"""The report page's reads of the rollups, on SQLite and Postgres: range, tenant filter by
name or id, sums over models, latency histograms per backend."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.reports.page_data import ReportRange, load_page
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18 08:53 UTC


async def _seed(engine: AsyncEngine) -> None:
    chain = Chain("report-page")
    events = [
        make_event(ts_unix_s=DAY, duration_s=0.5, ttft_s=0.05),
        make_event(ts_unix_s=DAY + 1, requested_model="small", duration_s=0.5, ttft_s=0.05),
        make_event(ts_unix_s=DAY + 2, backend="gpt-frontier", zone="external",
                   rule="long-context", cost_micro_usd=5_000, sensitivity=("pii",),
                   redacted=True, duration_s=2.0, ttft_s=0.4),
        make_event(ts_unix_s=DAY + 86_400, tenant_id="t-beta", tenant_name="beta",
                   sensitivity=("pii",), duration_s=1.0),
        make_event(ts_unix_s=DAY + 5 * 86_400),  # outside the range below
    ]
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])


async def test_the_page_reads_a_range_of_days(engine: AsyncEngine) -> None:
    await _seed(engine)
    data = await load_page(engine, ReportRange(date(2026, 11, 18), date(2026, 11, 20)))
    assert data.requests == 4
    assert data.backends == ("gpt-frontier", "llama-8b")
    assert data.cost_by_day["llama-8b"] == (300, 150, 0)  # two models, one day, summed
    assert data.baseline_by_day == (18_000, 6_000, 0)
    assert [(t.tenant, t.requests) for t in data.tenants] == [("acme", 3), ("beta", 1)]
    assert (data.sensitive, data.sensitive_kept_home, data.self_hosted_requests) == (2, 1, 3)
    latency = {row.backend: row for row in data.latency}
    assert latency["llama-8b"].ttft_s[0] == pytest.approx(0.05, rel=0.1)
    assert latency["llama-8b"].total_s[2] == pytest.approx(1.0, rel=0.1)
    assert latency["gpt-frontier"].total_s[0] == pytest.approx(2.0, rel=0.1)


async def test_one_tenant_by_name_or_id(engine: AsyncEngine) -> None:
    await _seed(engine)
    for tenant in ("beta", "t-beta"):
        data = await load_page(
            engine, ReportRange(date(2026, 11, 18), date(2026, 11, 20), tenant)
        )
        assert data.requests == 1 and [t.tenant for t in data.tenants] == ["beta"]
        (row,) = data.latency  # beta's own histogram only
        assert row.total_s[0] == pytest.approx(1.0, rel=0.1)
    nobody = await load_page(engine, ReportRange(date(2026, 11, 18), date(2026, 11, 20), "x"))
    assert nobody.empty and nobody.latency == ()
