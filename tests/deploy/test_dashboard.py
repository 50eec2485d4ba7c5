"""deploy/grafana/gateway-dashboard.json: well-formed for Grafana, and every metric its PromQL
names is one a real gateway exports at /metrics (a renamed metric breaks a panel silently)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.deploy.conftest import ROOT
from tests.e2e.conftest import ADMIN_KEY, HELLO_BODY, Gateway

DASHBOARD = ROOT / "deploy" / "grafana" / "gateway-dashboard.json"
# What Prometheus sends (the e2e gateway has no metrics key of its own; the admin key reads too).
SCRAPER = {"authorization": f"Bearer {ADMIN_KEY}"}
# PromQL words that look like metric names: aggregations, functions, keywords
PROMQL_WORDS = {
    "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
    "count_values", "group", "by", "without", "on", "ignoring", "group_left", "group_right",
    "and", "or", "unless", "offset", "bool", "rate", "irate", "increase", "delta", "idelta",
    "histogram_quantile", "label_values", "label_replace", "vector", "scalar", "time",
    "clamp_min", "clamp_max", "abs", "ceil", "floor", "round", "changes", "resets",
    "sum_over_time", "avg_over_time", "max_over_time", "min_over_time", "absent",
}
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count"),
            "summary": ("_sum", "_count"), "gauge": ("",), "unknown": ("",), "info": ("_info",)}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (label names, strings, ranges and
    functions left out)."""
    # label_values(metric, label), a Grafana variable query: the first argument is a metric
    names = set(re.findall(r"label_values\(\s*([a-zA-Z_:][\w:]*)\s*,[^)]*\)", expr))
    expr = re.sub(r"label_values\([^)]*\)", "", expr)
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # label values, regexes
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # range durations
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    for match in re.finditer(r"(?<![\w$.])([a-zA-Z_:][\w:]*)\b(?!\s*\()", expr):
        if match.group(1) not in PROMQL_WORDS:
            names.add(match.group(1))
    return names


def test_metric_names_parses_promql() -> None:
    assert metric_names(
        'sum by (reason) (rate(gateway_budget_rejections_total{reason=~"rpm|tpm"}'
        "[$__rate_interval]))"
    ) == {"gateway_budget_rejections_total"}
    assert metric_names(
        "histogram_quantile(0.95, sum by (le) (rate(x_seconds_bucket[5m]))) * 1 + y"
    ) == {"x_seconds_bucket", "y"}
    assert metric_names("label_values(gateway_backend_in_flight, backend)") == {
        "gateway_backend_in_flight"}


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    data = json.loads(DASHBOARD.read_text())
    assert isinstance(data, dict)
    return data


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in dashboard["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))  # panels of a collapsed row
    return found


def exprs(dashboard: dict[str, Any]) -> list[str]:
    found = [t["expr"] for p in panels(dashboard) for t in p.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            found.append(query["query"] if isinstance(query, dict) else query)
    return found


def test_dashboard_is_well_formed(dashboard: dict[str, Any]) -> None:
    assert dashboard["uid"] and dashboard["title"]
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert "datasource" in variables  # importable into any Grafana, not only the compose one
    for panel in panels(dashboard):
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"]
            # every $variable a query uses is defined (or one of Grafana's own)
            for used in re.findall(r"\$(\w+)", target["expr"]):
                assert used in variables or used.startswith("__"), used


def test_dashboard_covers_the_operational_questions(dashboard: dict[str, Any]) -> None:
    names = set().union(*(metric_names(e) for e in exprs(dashboard)))
    for needed in ("gateway_backend_circuit_state", "gateway_backend_scrape_age_seconds",
                   "gateway_budget_rejections_total", "gateway_audit_backlog",
                   "gateway_audit_spool_rows", "gateway_policy_reloads_total",
                   "gateway_backend_ttft_seconds", "gateway_backend_effective_usd_per_mtok",
                   "gateway_requests_total", "gateway_request_duration_seconds_bucket",
                   "gateway_ttft_seconds_bucket", "gateway_tokens_total",
                   "gateway_cost_usd_total", "gateway_decisions_total",
                   "gateway_spill_overs_total"):
        assert needed in names, needed


def exported_names(text: str) -> set[str]:
    """Every sample name /metrics can produce, including those of labelled metrics that have
    no sample yet (their family is declared: a panel shows data once one is counted)."""
    names = set()
    for family in text_string_to_metric_families(text):
        names.update(sample.name for sample in family.samples)
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def test_every_dashboard_metric_is_exported(gateway: Gateway, dashboard: dict[str, Any]) -> None:
    with gateway.client() as client:
        for _ in range(2):
            client.chat.completions.create(model="auto", max_tokens=8, **HELLO_BODY)
    resp = httpx.get(f"{gateway.url}/metrics", timeout=10, headers=SCRAPER)
    resp.raise_for_status()
    exported = exported_names(resp.text)
    used = set().union(*(metric_names(e) for e in exprs(dashboard)))
    assert used, "no metric found in the dashboard"
    missing = sorted(used - exported)
    assert not missing, f"the dashboard queries metrics the gateway does not export: {missing}"
    # the $backend variable has values to offer
    assert re.search(r'^gateway_backend_in_flight\{backend="sim-a"\}', resp.text, re.M)


def test_requests_are_counted_from_the_audit_batches(gateway: Gateway) -> None:
    with gateway.client() as client:
        client.chat.completions.create(model="auto", max_tokens=8, **HELLO_BODY)
    deadline = time.monotonic() + 10
    while True:  # counted when the audit writer drains its batch (every 200 ms at most)
        text = httpx.get(f"{gateway.url}/metrics", timeout=10, headers=SCRAPER).text
        found = re.search(r'^gateway_requests_total\{backend="(sim-[ab])",status="200",'
                          r'tenant="acme"\} (\d+)', text, re.M)
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert found, "no request counted"
    backend = found.group(1)
    assert re.search(rf'^gateway_request_duration_seconds_count\{{backend="{backend}"\}} [1-9]',
                     text, re.M)
    assert re.search(rf'^gateway_tokens_total\{{backend="{backend}",kind="completion",'
                     r'tenant="acme"\} [1-9]', text, re.M)
