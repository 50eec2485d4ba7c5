"""Every report's numbers, exactly (by hand), from rows written by the audit repository, on
SQLite and Postgres: cost by each dimension, savings, economics with GPU-hours paid, and paging."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.audit.rollup import bucket_seconds, latency_bucket
from gateway.budget.pricing import format_usd
from gateway.deployments.repository import DeclaredGpus, DeploymentLog, paid_spans
from gateway.errors import InvalidRequest
from gateway.reports.audit_rows import AuditQuery, Cursor
from gateway.reports.build import (
    Scope,
    audit_report,
    cost_report,
    economics_report,
    savings_report,
)
from gateway.reports.cost_model import IDLE
from gateway.reports.html_page import render_page, usd
from gateway.reports.page_data import ReportRange, load_page
from gateway.reports.periods import parse_period
from gateway.reports.render import ReportTable, to_csv, to_json
from gateway.reports.rollup_repository import Dimension
from gateway.reports.tenant_cost import month_cost
from gateway.types import AuditEvent
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18T11:06:40Z
NOW = datetime(2026, 11, 22, tzinfo=UTC)
EVERYONE = Scope(None, None, NOW)
ACME = Scope("t-acme", "acme", NOW)
BETA = dict(tenant_id="t-beta", tenant_name="beta", key_id="k-beta")
FRONTIER = dict(backend="gpt-frontier", zone="external", upstream_model="gpt-4o",
                rule="long-context", requested_model="gpt-4o")


def events() -> list[AuditEvent]:
    return [
        make_event(ts_unix_s=DAY),
        make_event(ts_unix_s=DAY + 60, sensitivity=("pii",), sensitive_types=("email",)),
        make_event(ts_unix_s=DAY + 30, **FRONTIER, cost_micro_usd=5000,
                   baseline_cost_micro_usd=5000, sensitivity=("pii",), redacted=True),
        make_event(ts_unix_s=DAY + 120, status=502, outcome="error", error_type="upstream",
                   completion_tokens=0, cost_micro_usd=0, baseline_cost_micro_usd=None,
                   ttft_s=None),
        make_event(ts_unix_s=DAY + 86_400, **BETA, cost_micro_usd=200,
                   baseline_cost_micro_usd=7000),
        make_event(ts_unix_s=DAY - 10 * 86_400, cost_micro_usd=999_999),  # 2026-11-08
    ]


async def store(engine: AsyncEngine, batch: list[AuditEvent], chain_id: str = "r1") -> None:
    chain = Chain(chain_id)
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in batch])


def records(table: ReportTable) -> dict[str, dict[str, Any]]:
    names = [c.name for c in table.columns]
    return {str(r[0]): dict(zip(names, r, strict=True)) for r in table.rows}


NOV_18_19 = parse_period("2026-11-18", "2026-11-19", NOW)


async def test_cost_by_every_dimension(engine: AsyncEngine) -> None:
    await store(engine, events())
    by_tenant = await cost_report(engine, NOV_18_19, EVERYONE, Dimension.TENANT)
    rows = records(by_tenant)
    assert list(rows) == ["acme", "beta"]  # the bigger spender first
    assert rows["acme"] == {"tenant": "acme", "requests": 4, "errors": 1, "prompt_tokens": 4800,
                            "completion_tokens": 900, "cached_tokens": 0, "tokens": 5700,
                            "api_cost_usd": 5300, "gpu_cost_usd": 0, "cost_usd": 5300}
    assert rows["beta"]["requests"] == 1 and rows["beta"]["cost_usd"] == 200
    # No GPUs declared: what the rows recorded is all there is.
    assert by_tenant.totals == ("total", 5, 1, 6000, 1200, 0, 7200, 5500, 0, 5500)
    assert dict(by_tenant.meta)["since"] == "2026-11-18T00:00:00+00:00"
    assert dict(by_tenant.meta)["until"] == "2026-11-20T00:00:00+00:00"

    days = await cost_report(engine, NOV_18_19, EVERYONE, Dimension.DAY)
    assert [(r[0], r[1], r[9]) for r in days.rows] == [("2026-11-18", 4, 5300),
                                                       ("2026-11-19", 1, 200)]
    backends = records(await cost_report(engine, NOV_18_19, EVERYONE, Dimension.BACKEND))
    assert {k: (v["requests"], v["cost_usd"]) for k, v in backends.items()} == {
        "gpt-frontier": (1, 5000), "llama-8b": (4, 500)}
    models = records(await cost_report(engine, NOV_18_19, EVERYONE, Dimension.MODEL))
    assert {k: v["requests"] for k, v in models.items()} == {"gpt-4o": 1, "auto": 4}
    rules = records(await cost_report(engine, NOV_18_19, EVERYONE, Dimension.RULE))
    assert {k: v["cost_usd"] for k, v in rules.items()} == {"long-context": 5000, "default": 500}


async def test_cost_for_one_tenant_and_other_ranges(engine: AsyncEngine) -> None:
    await store(engine, events())
    acme = await cost_report(engine, NOV_18_19, ACME, Dimension.BACKEND)
    assert {k: v["requests"] for k, v in records(acme).items()} == {"gpt-frontier": 1,
                                                                      "llama-8b": 3}
    assert dict(acme.meta)["tenant"] == "acme"
    # A range inside one day still reads that whole day from the rollups.
    late = parse_period("2026-11-19T23:00:00", "2026-11-19T23:30:00", NOW)
    assert records(await cost_report(engine, late, EVERYONE, Dimension.TENANT)).keys() == {"beta"}
    month = parse_period("2026-11-01", "2026-11-30", NOW)
    whole = await cost_report(engine, month, ACME, Dimension.TENANT)
    assert whole.totals is not None and whole.totals[9] == 5300 + 999_999
    empty = await cost_report(engine, parse_period("2026-10-01", "2026-10-02", NOW), EVERYONE,
                              Dimension.TENANT)
    assert empty.rows == () and empty.totals == ("total", 0, 0, 0, 0, 0, 0, 0, 0, 0)


async def test_savings_against_the_baseline(engine: AsyncEngine) -> None:
    await store(engine, events())
    table = await savings_report(engine, NOV_18_19, EVERYONE, Dimension.TENANT)
    acme = records(table)["acme"]
    assert acme == {
        "tenant": "acme", "requests": 4, "api_cost_usd": 5300, "gpu_cost_usd": 0,
        "cost_usd": 5300, "baseline_usd": 17_000,
        "saved_usd": 11_700, "saved_share": 11_700 / 17_000,
        "self_hosted_requests": 3, "api_requests": 1, "self_hosted_share": 0.75,
        "self_hosted_token_share": 4200 / 5700, "sensitive": 2, "sensitive_kept_home": 1,
        "sensitive_external": 1, "redacted": 1, "sensitive_approved": 0,
        "routing_saved_usd": 11_700, "idle_gpu_usd": 0,  # no GPUs paid: all of it is routing
    }
    names = [c.name for c in table.columns]
    totals = dict(zip(names, table.totals or (), strict=True))
    assert (totals["cost_usd"], totals["baseline_usd"], totals["saved_usd"]) == (
        5500, 24_000, 18_500)
    assert totals["self_hosted_share"] == 4 / 5
    by_day = await savings_report(engine, NOV_18_19, ACME, Dimension.DAY)
    assert [r[0] for r in by_day.rows] == ["2026-11-18"]


# llama-8b on 2 GPUs at $4.50 an hour for both, and an idle spare at $1, both declared at
# 06:00 on the 18th: the 18th pays 18 hours, the 19th all 24.
DECLARED_AT = datetime(2026, 11, 18, 6, tzinfo=UTC)
FLEET = [DeclaredGpus("llama-8b", 4_500_000, 2), DeclaredGpus("spare", 1_000_000, 1)]
ZONES = {"llama-8b": "self_hosted", "spare": "self_hosted", "gpt-frontier": "external"}
# Busy minutes: 11:06, 11:07, 11:08 on the 18th (of 1,080 paid), 11:06 on the 19th (of 1,440).
LLAMA_18 = 81_000_000 * 3 // 1080  # $0.225 of the 18th's $81 goes to acme's requests
LLAMA_19 = 108_000_000 // 1440  # $0.075 of the 19th's $108 to beta's
LLAMA_PAID = 81_000_000 + 108_000_000
SPARE_PAID = 42_000_000
IDLE_PAID = LLAMA_PAID - LLAMA_18 - LLAMA_19 + SPARE_PAID


async def declared_fleet(engine: AsyncEngine) -> None:
    await DeploymentLog(engine).declare(FLEET, DECLARED_AT)


async def test_every_report_prices_the_same_gpu_hours(engine: AsyncEngine) -> None:
    await store(engine, events())
    await declared_fleet(engine)
    cost = await cost_report(engine, NOV_18_19, EVERYONE, Dimension.TENANT)
    rows = records(cost)
    assert list(rows) == ["acme", "beta", IDLE]
    assert (rows["acme"]["api_cost_usd"], rows["acme"]["gpu_cost_usd"],
            rows["acme"]["cost_usd"]) == (5000, LLAMA_18, 5000 + LLAMA_18)
    assert rows["beta"]["cost_usd"] == LLAMA_19
    assert rows[IDLE]["cost_usd"] == IDLE_PAID
    everything = 5000 + LLAMA_PAID + SPARE_PAID
    assert cost.totals is not None and cost.totals[-1] == everything
    for by in Dimension:  # every grouping adds up to the same money
        table = await cost_report(engine, NOV_18_19, EVERYONE, by)
        assert table.totals is not None and table.totals[-1] == everything

    savings = await savings_report(engine, NOV_18_19, EVERYONE, Dimension.TENANT)
    names = [c.name for c in savings.columns]
    totals = dict(zip(names, savings.totals or (), strict=True))
    assert (totals["cost_usd"], totals["baseline_usd"], totals["saved_usd"]) == (
        everything, 24_000, 24_000 - everything)
    acme = records(savings)["acme"]
    assert acme["saved_usd"] == 17_000 - 5000 - LLAMA_18
    # The same figures in JSON and CSV.
    body = orjson.loads(to_json(savings))
    assert body["totals"]["saved_usd"] == format_usd(24_000 - everything)
    assert body["gpu_attribution"].startswith("GPU-hours paid per deployment")
    assert f"acme,4,{format_usd(5000)},{format_usd(LLAMA_18)}" in to_csv(savings)

    economics = await economics_report(engine, NOV_18_19, EVERYONE, FLEET, ZONES)
    meta = dict(economics.meta)
    assert meta["gpu_cost_usd"] == format_usd(LLAMA_PAID + SPARE_PAID)
    assert meta["idle_gpu_cost_usd"] == format_usd(IDLE_PAID)
    assert meta["api_cost_usd"] == format_usd(5000)

    page = await load_page(engine, ReportRange(date(2026, 11, 18), date(2026, 11, 19)), FLEET,
                           ZONES)
    assert page.cost_micro_usd == everything
    assert page.idle_micro_usd == IDLE_PAID
    assert page.baseline_cost_micro_usd == 24_000
    assert {t.tenant: t.cost_micro_usd for t in page.tenants} == {
        "acme": 5000 + LLAMA_18, "beta": LLAMA_19}
    html = render_page(page)
    assert usd(everything) in html and usd(IDLE_PAID) in html

    # One tenant's view is its own line of the whole, without the idle GPUs.
    own = await cost_report(engine, NOV_18_19, ACME, Dimension.MODEL)
    assert own.totals is not None and own.totals[-1] == 5000 + LLAMA_18
    # GET /v1/usage's month so far: the same model; the 8th's request ran before llama-8b
    # was declared, so it pays no GPU-hours (and its recorded $1 is not a cost).
    month = await month_cost(engine, "t-acme", FLEET, datetime(2026, 11, 20, tzinfo=UTC))
    assert (month["cost_usd"], month["gpu_cost_usd"], month["baseline_usd"]) == (
        format_usd(5000 + LLAMA_18), format_usd(LLAMA_18), format_usd(17_000 + 6000))


async def test_economics_per_backend(engine: AsyncEngine) -> None:
    await store(engine, events())
    await declared_fleet(engine)
    table = await economics_report(engine, NOV_18_19, EVERYONE, FLEET, ZONES)
    rows = records(table)
    assert list(rows) == ["gpt-frontier", "llama-8b", "spare"]
    llama = rows["llama-8b"]
    gpu_hours = 2 * 42.0
    ok_total = bucket_seconds(latency_bucket(1.25))
    ttft = bucket_seconds(latency_bucket(0.12))
    assert llama == {
        "backend": "llama-8b", "zone": "self_hosted", "requests": 4, "errors": 1,
        "prompt_tokens": 4800, "completion_tokens": 900, "output_input_ratio": 900 / 4800,
        # Three streamed replies of 300 tokens: 299 after the first, in 1.13 s each.
        "decode_tokens_per_s": pytest.approx(299 / (1.25 - 0.12)),
        "prompt_tokens_per_gpu_s": 4800 / (4 * 60 * 2),
        "output_tokens_per_gpu_s": 900 / (4 * 60 * 2),
        "tokens_per_gpu_hour": pytest.approx(5700 / gpu_hours),
        "gpu_hours_paid": gpu_hours, "api_cost_usd": 0, "gpu_cost_usd": LLAMA_PAID,
        "idle_gpu_cost_usd": LLAMA_PAID - LLAMA_18 - LLAMA_19,
        "usd_per_1k_tokens": round(LLAMA_PAID * 1000 / 5700),
        "latency_p50_s": ok_total, "latency_p95_s": ok_total, "latency_p99_s": ok_total,
        "ttft_p50_s": ttft, "ttft_p95_s": ttft, "ttft_p99_s": ttft,
        "kv_hit_rate": 0.5, "cached_share": 0.0,
        "busy_share": 4 * 60 / (42 * 3600), "gpu_util": None, "gpu_memory_used_bytes": None,
    }
    frontier = rows["gpt-frontier"]
    assert frontier["usd_per_1k_tokens"] == round(5000 * 1000 / 1500)
    assert frontier["gpu_cost_usd"] is None and frontier["busy_share"] is None
    spare = rows["spare"]
    assert (spare["requests"], spare["gpu_cost_usd"], spare["busy_share"]) == (
        0, SPARE_PAID, 0.0)


async def test_economics_of_today_counts_hours_paid_so_far(engine: AsyncEngine) -> None:
    await store(engine, events()[:1])
    await declared_fleet(engine)
    midday = Scope(None, None, datetime(2026, 11, 18, 12, tzinfo=UTC))
    today = parse_period("2026-11-18", "2026-11-18", midday.now)
    table = await economics_report(engine, today, midday, FLEET, {})
    assert records(table)["llama-8b"]["gpu_cost_usd"] == 6 * 4_500_000  # 06:00 to noon
    with pytest.raises(InvalidRequest) as caught:
        await economics_report(engine, today, ACME, FLEET, {})
    assert caught.value.param == "tenant"


async def test_a_reload_that_changes_nothing_keeps_paying_from_the_first_declaration(
        engine: AsyncEngine) -> None:
    log = DeploymentLog(engine)
    await log.declare(FLEET, DECLARED_AT)
    await log.declare(FLEET, DECLARED_AT + timedelta(hours=1))  # a reload, same GPUs
    # The spare is dropped at 08:00; llama's price changes at 09:00.
    await log.declare(FLEET[:1], DECLARED_AT + timedelta(hours=2))
    await log.declare([DeclaredGpus("llama-8b", 9_000_000, 4)], DECLARED_AT + timedelta(hours=3))
    async with engine.connect() as conn:
        spans = await paid_spans(conn, DECLARED_AT, DECLARED_AT + timedelta(days=1))
    assert [(s.backend, s.since.hour, s.until.hour if s.until else None, s.gpu_count)
            for s in spans] == [("llama-8b", 6, 9, 2), ("llama-8b", 9, None, 4),
                                ("spare", 6, 8, 1)]


async def test_a_deployment_never_recorded_pays_from_its_first_traffic(
        engine: AsyncEngine) -> None:
    await store(engine, events()[:-1])  # no deployment record: the gateway never ran
    table = await cost_report(engine, NOV_18_19, EVERYONE, Dimension.BACKEND, FLEET)
    rows = records(table)
    # llama-8b served first at 11:06 on the 18th: paid from then; the spare never served.
    first = datetime(2026, 11, 18, 11, 6, tzinfo=UTC)
    paid = round(4_500_000 * (datetime(2026, 11, 19, tzinfo=UTC) - first).total_seconds()
                 / 3600) + 108_000_000
    assert table.totals is not None and table.totals[-1] == 5000 + paid
    assert "spare" not in rows


async def test_audit_rows_are_filtered_and_paged_without_gaps(engine: AsyncEngine) -> None:
    await store(engine, events())
    # Another replica's chain with rows at exactly the same times: the cursor breaks ties.
    await store(engine, [make_event(ts_unix_s=DAY + i * 30) for i in range(3)], "r2")
    period = parse_period("2026-11-18", "2026-11-19", NOW)
    everything = await audit_report(engine, AuditQuery(period, limit=100), EVERYONE)
    assert len(everything.rows) == 8 and dict(everything.meta)["next_cursor"] is None
    order = [(r[0], r[-2], r[-1]) for r in everything.rows]  # ts, chain_id, seq
    assert order == sorted(order, reverse=True)

    seen: list[tuple[Any, ...]] = []
    query = AuditQuery(period, limit=3)
    while True:
        page = await audit_report(engine, query, EVERYONE)
        seen += page.rows
        cursor = dict(page.meta)["next_cursor"]
        if cursor is None:
            break
        assert len(page.rows) == 3
        query = AuditQuery(period, limit=3, cursor=Cursor.decode(cursor))
    assert seen == list(everything.rows)

    names = [c.name for c in everything.columns]
    mine = await audit_report(engine, AuditQuery(period, tenant_id="t-beta"), ACME)
    assert {dict(zip(names, r, strict=True))["tenant"] for r in mine.rows} == {"acme"}
    assert len(mine.rows) == 7  # the scope's tenant wins over the query's
    frontier = await audit_report(engine, AuditQuery(period, backend="gpt-frontier"), EVERYONE)
    assert [dict(zip(names, r, strict=True))["cost_usd"] for r in frontier.rows] == [5000]
    errors = await audit_report(engine, AuditQuery(period, outcome="error"), EVERYONE)
    assert [dict(zip(names, r, strict=True))["status"] for r in errors.rows] == [502]
    exact = parse_period("2026-11-18T11:07:00", "2026-11-18T11:08:00", NOW)
    within = await audit_report(engine, AuditQuery(exact), EVERYONE)
    assert len(within.rows) == 4  # DAY+30 (both chains), DAY+60 (both chains); to the second
