"""The report page, pure: rollup groups → page data → one self-contained HTML document."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from gateway.audit.rollup import latency_bucket
from gateway.reports.cost_model import IDLE
from gateway.reports.economics import BackendEconomics, GpuPaid, backend_economics
from gateway.reports.html_page import render_page, seconds, usd
from gateway.reports.page_data import (
    MAX_DAYS,
    DailyTotals,
    RangeError,
    ReportRange,
    build_page,
    report_range,
)
from gateway.reports.rollup_repository import BackendSums
from gateway.reports.svg_charts import log_ticks, nice_ticks

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
RANGE = ReportRange(date(2026, 11, 17), date(2026, 11, 19))
GROUP = DailyTotals(
    day=date(2026, 11, 17), tenant_id="t-acme", tenant="acme", backend="llama-8b",
    rule="default", zone="self_hosted", requests=10, errors=1, cost_micro_usd=1_500,
    baseline_cost_micro_usd=60_000, sensitive=2, sensitive_external=0,
)
AWAY = replace(GROUP, backend="gpt-frontier", zone="external", rule="long-context",
               requests=5, errors=0, cost_micro_usd=25_000, baseline_cost_micro_usd=30_000,
               sensitive=1, sensitive_external=1)


def histogram(*latencies_s: float) -> dict[int, int]:
    counts: dict[int, int] = {}
    for s in latencies_s:
        counts[latency_bucket(s)] = counts.get(latency_bucket(s), 0) + 1
    return counts


def sample_page(*groups: DailyTotals) -> str:
    data = build_page(RANGE, groups or (GROUP, AWAY), {
        ("llama-8b", "total"): histogram(*[0.5] * 90, *[2.0] * 10),
        ("llama-8b", "ttft"): histogram(*[0.05] * 100),
        ("gpt-frontier", "total"): histogram(1.0, 3.0),
    }, NOW)
    return render_page(data)


def svgs(page: str) -> list[ET.Element]:
    """Every chart, parsed as XML: a chart that is not well-formed fails here."""
    return [ET.fromstring(m) for m in re.findall(r'<svg [^>]*class="chart".*?</svg>', page, re.S)]


def test_ticks_are_round_and_cover_the_top() -> None:
    assert nice_ticks(9.3) == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(1_234_567)[-1] >= 1_234_567
    assert nice_ticks(0) == [0.0, 1.0]
    assert log_ticks(0.03, 4.0) == [0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5]


def test_money_and_durations_read_like_money_and_durations() -> None:
    assert usd(0) == "$0.00"
    assert usd(1_500) == "$0.0015"
    assert usd(12_345_678) == "$12.35" and usd(500_000) == "$0.50"
    assert usd(4_321_000_000) == "$4,321"
    assert seconds(0.123) == "123 ms" and seconds(2.5) == "2.5 s"


def test_the_range_defaults_to_thirty_days_and_refuses_nonsense() -> None:
    rng = report_range(None, None, "", today=date(2026, 11, 30))
    assert (rng.since, rng.until, rng.tenant) == (date(2026, 11, 1), date(2026, 11, 30), None)
    with pytest.raises(RangeError, match="after"):
        report_range(date(2026, 2, 1), date(2026, 1, 1), None)
    with pytest.raises(RangeError, match="longer"):
        report_range(date(2020, 1, 1), date(2020, 1, 1).replace(year=2023), None)
    assert len(report_range(None, date(2026, 1, 1), None).days) == 30
    assert MAX_DAYS > 366


def test_groups_fold_into_days_backends_rules_and_tenants() -> None:
    other_day = replace(GROUP, day=date(2026, 11, 19), tenant_id="t-beta", tenant="beta",
                        requests=2, cost_micro_usd=500, baseline_cost_micro_usd=10_000)
    outside = replace(GROUP, day=date(2026, 12, 1))  # not in the range: ignored
    data = build_page(RANGE, [GROUP, AWAY, other_day, outside], {}, NOW)
    assert data.days == (date(2026, 11, 17), date(2026, 11, 18), date(2026, 11, 19))
    assert data.backends == ("gpt-frontier", "llama-8b")  # the costliest first
    assert data.cost_by_day["llama-8b"] == (1_500, 0, 500)
    assert data.baseline_by_day == (90_000, 0, 10_000)
    assert [(s.name, s.requests) for s in data.backend_mix] == [("llama-8b", 12),
                                                                ("gpt-frontier", 5)]
    assert [s.name for s in data.rule_mix] == ["default", "long-context"]
    assert [(t.tenant, t.requests, t.cost_micro_usd) for t in data.tenants] == [
        ("acme", 15, 26_500), ("beta", 2, 500)]
    assert (data.requests, data.errors, data.self_hosted_requests) == (17, 2, 12)
    assert (data.sensitive, data.sensitive_kept_home) == (5, 4)
    assert data.latency == ()  # no histograms, no latency rows


def test_latency_percentiles_come_from_the_histograms() -> None:
    data = build_page(RANGE, [GROUP], {("llama-8b", "total"): histogram(*[0.5] * 90,
                                                                          *[2.0] * 10)}, NOW)
    (row,) = data.latency
    p50, p95, p99 = row.total_s
    assert p50 == pytest.approx(0.5, rel=0.1) and p99 == pytest.approx(2.0, rel=0.1)
    assert p95 == pytest.approx(2.0, rel=0.1)
    assert row.ttft_s == (None, None, None)


def test_the_page_has_every_chart_and_a_legend_per_backend() -> None:
    page = sample_page()
    assert page.startswith("<!doctype html>")
    for section in ("summary", "cost", "mix", "latency", "savings"):
        assert f'id="{section}"' in page
    charts = svgs(page)
    assert len(charts) == 6  # cost, mix ×2, latency ×2, savings
    assert "<polyline" in page  # the baseline line over the stacked bars
    legend = re.findall(r"<li><svg[^>]*>.*?</svg>(.*?)</li>", page)
    assert {"llama-8b", "gpt-frontier", "baseline", "p50", "p95", "p99"} <= set(legend)
    assert "$0.03" in page  # total cost, 26,500 micro-USD
    assert "2 of 3" in page  # sensitive requests kept at home
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")  # nothing to run, nothing to fetch


def test_names_from_the_database_are_escaped_everywhere() -> None:
    evil = '<script>alert("x")</script>'
    page = sample_page(replace(GROUP, tenant=evil, backend=evil + "b", rule=evil + "r"),
                       AWAY)
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert len(svgs(page)) == 5  # still well-formed; no TTFT histogram left, so no TTFT chart
    assert "None recorded in this range." in page


def test_no_requests_renders_an_empty_state_not_a_crash() -> None:
    page = render_page(build_page(RANGE, [], {}, NOW))
    assert "No requests in this range" in page
    assert svgs(page) == []
    page = render_page(build_page(replace(RANGE, tenant="<b>nobody</b>"), [], {}, NOW))
    assert "tenant &lt;b&gt;nobody&lt;/b&gt;" in page


def test_without_a_baseline_the_page_says_so_and_draws_no_line() -> None:
    page = sample_page(replace(GROUP, baseline_cost_micro_usd=0),
                       replace(AWAY, baseline_cost_micro_usd=0))
    assert "<polyline" not in page
    assert "No baseline cost was recorded" in page
    assert len(svgs(page)) == 6


def test_a_long_range_keeps_the_day_labels_readable() -> None:
    rng = ReportRange(date(2025, 1, 1), date(2026, 1, 1))
    page = render_page(build_page(rng, [replace(GROUP, day=date(2025, 6, 1))], {}, NOW))
    (cost, *_) = svgs(page)
    day_labels = [t for t in cost.iter("{http://www.w3.org/2000/svg}text")
                  if t.get("text-anchor") == "middle"]
    assert 5 <= len(day_labels) <= 12


def test_idle_gpus_and_unit_economics_are_on_the_page() -> None:
    paid_gpu = replace(GROUP, cost_micro_usd=4_000_000, gpu_micro_usd=4_000_000)
    idle = DailyTotals(date(2026, 11, 17), "", "", IDLE, "", "self_hosted", 0, 0, 20_000_000,
                       0, 0, 0, 20_000_000)
    sums = BackendSums("<b>llama</b>", "self_hosted", 10, 0, 8000, 2000, 0, 0, 4.0, 190, 0.0, 0)
    owned: BackendEconomics = backend_economics(
        sums, {}, {}, GpuPaid(86_400.0, 86_400.0, 24_000_000, 60, 20_000_000))
    data = build_page(RANGE, [paid_gpu, AWAY, idle], {}, NOW, [owned])
    assert data.idle_micro_usd == 20_000_000
    assert data.cost_micro_usd == 4_000_000 + 25_000 + 20_000_000
    assert data.gpu_micro_usd == 24_000_000
    assert [t.tenant for t in data.tenants] == ["acme"]  # the idle GPUs are nobody's
    page = render_page(data)
    assert "Idle GPUs" in page and usd(20_000_000) in page
    assert '<section id="economics">' in page
    assert "&lt;b&gt;llama&lt;/b&gt;" in page and "<b>llama</b>" not in page
    assert len(svgs(page)) >= 8  # cost, two mixes, two latency, savings, four economics


def test_negative_money_puts_the_sign_before_the_dollar() -> None:
    assert usd(-30_000) == "-$0.03" and usd(-1_500) == "-$0.0015"
    assert usd(-4_321_000_000) == "-$4,321"
    assert "$-" not in sample_page(replace(GROUP, baseline_cost_micro_usd=0, cost_micro_usd=30_000),
                                   replace(AWAY, baseline_cost_micro_usd=10_000))


def test_a_young_deployment_gets_no_empty_days_before_its_first() -> None:
    rng = ReportRange(date(2026, 10, 22), date(2026, 11, 20))  # the default 30 days
    page = render_page(build_page(rng, [replace(GROUP, day=date(2026, 11, 20))], {}, NOW))
    (cost, *_) = svgs(page)
    labels = [t.text for t in cost.iter("{http://www.w3.org/2000/svg}text")
              if t.get("text-anchor") == "middle"]
    assert labels == ["2026-11-20"]


def test_gpu_hours_carry_enough_decimals_and_a_tenant_is_told_idle_is_not_theirs() -> None:
    sums = BackendSums("llama", "self_hosted", 10, 0, 8000, 2000, 0, 0, 4.0, 190, 0.0, 0)
    # 27 GPU-seconds paid (0.0075 h), two thirds idle: "0.0" would hide them.
    owned = backend_economics(sums, {}, {}, GpuPaid(27.0, 27.0, 6_000, 1, 4_000))
    page = render_page(build_page(RANGE, [GROUP], {}, NOW, [owned]))
    assert "<td>0.0075</td>" in page
    mine = render_page(build_page(replace(RANGE, tenant="acme"), [GROUP], {}, NOW))
    assert "not attributed to tenants" in mine


def test_the_page_splits_savings_and_says_when_idle_capacity_dominates() -> None:
    # GROUP: baseline 60,000, cost 1,500 (its busy GPU share); 30,000 µUSD of GPUs idle.
    paid = replace(GROUP, gpu_micro_usd=1_500)
    idle = DailyTotals(date(2026, 11, 17), "", "", IDLE, "", "self_hosted", 0, 0, 30_000,
                       0, 0, 0, 30_000)
    page = render_page(build_page(RANGE, [paid, idle], {}, NOW))
    # Routing saved 60,000 − 1,500 = 58,500; less 30,000 idle = 28,500 (the card's figure).
    assert ("Saved $0.03 = routing savings on the traffic served $0.06 − idle GPU-hours "
            "$0.03 (of $0.03 GPU-hours paid).") in page
    assert "Idle capacity dominates" not in page
    assert "routing $0.06, idle GPUs -$0.03" in page
    quiet = replace(idle, cost_micro_usd=90_000, gpu_micro_usd=90_000)
    page = render_page(build_page(RANGE, [paid, quiet], {}, NOW))
    # 58,500 − 90,000 = −31,500: the idle GPUs, not routing, turned it negative.
    assert "Saved -$0.03 = routing savings" in page and "Idle capacity dominates" in page


def test_a_young_deployment_sees_its_hours() -> None:
    from gateway.reports.hourly import HourlyCost

    start = datetime(2026, 11, 20, tzinfo=UTC)
    hours = tuple(start + i * (NOW - start) / 12 for i in range(12))
    spread = HourlyCost(hours, {"llama-8b": (0,) * 9 + (500, 1_000, 0)},
                        (0,) * 9 + (20_000, 40_000, 0))
    rng = ReportRange(date(2026, 10, 22), date(2026, 11, 20))
    page = render_page(build_page(rng, [replace(GROUP, day=date(2026, 11, 20))], {}, NOW,
                                  hourly=spread))
    assert "<h2>Cost per hour</h2>" in page and "spread over its hours" in page
    (cost, *_) = svgs(page)
    labels = [t.text for t in cost.iter("{http://www.w3.org/2000/svg}text")
              if t.get("text-anchor") == "middle"]
    assert labels == ["09:00", "10:00", "11:00"]  # the empty hours before the first left out
