"""Query results → report tables: totals, savings arithmetic, ordering, audit cells, cursors
and GPU facts from the policy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.audit.records import event_row
from gateway.deployments.repository import DeclaredGpus
from gateway.errors import InvalidRequest
from gateway.policy.loader import parse_policy
from gateway.reports.audit_rows import Cursor, check_limit
from gateway.reports.breakdown import Line
from gateway.reports.cost_model import IDLE
from gateway.reports.gpus import declared_gpus
from gateway.reports.tables import audit_table, cost_table, savings_table
from tests.support.audit_events import make_event


def test_cost_totals_add_up_and_big_spenders_come_first() -> None:
    lines = [Line("acme", 3, 1, 300, 60, 10, api_micro_usd=400, gpu_micro_usd=600),
             Line("beta", 1, 0, 100, 20, 0, api_micro_usd=9_000),
             Line(IDLE, gpu_micro_usd=50_000)]
    table = cost_table("tenant", lines, ())
    # The idle GPUs come last whatever they cost: they are no tenant's.
    assert [r[0] for r in table.rows] == ["beta", "acme", IDLE]
    assert table.rows[1] == ("acme", 3, 1, 300, 60, 10, 360, 400, 600, 1_000)
    assert table.totals == ("total", 4, 1, 400, 80, 10, 480, 9_400, 50_600, 60_000)
    assert cost_table("day", lines, ()).rows[0][0] == "acme"  # days keep their order


def test_an_empty_cost_report_totals_zero() -> None:
    assert cost_table("tenant", [], ()).totals == ("total", 0, 0, 0, 0, 0, 0, 0, 0, 0)


def test_savings_count_the_gpu_hours_paid() -> None:
    line = Line("acme", requests=10, api_micro_usd=500, gpu_micro_usd=1_500,
                baseline_micro_usd=8_000, self_hosted_requests=6, api_requests=3,
                self_hosted_tokens=900, api_tokens=100, sensitive=4, sensitive_external=1,
                redacted=1)
    table = savings_table("tenant", [line, Line(IDLE, gpu_micro_usd=7_000)], ())
    row = dict(zip((c.name for c in table.columns), table.rows[0], strict=True))
    assert (row["cost_usd"], row["saved_usd"], row["saved_share"]) == (2_000, 6_000, 0.75)
    assert row["self_hosted_share"] == 6 / 9  # of the requests some backend served
    assert row["self_hosted_token_share"] == 0.9
    assert (row["sensitive"], row["sensitive_kept_home"], row["sensitive_external"]) == (4, 3, 1)
    totals = dict(zip((c.name for c in table.columns), table.totals or (), strict=True))
    # The idle GPUs were paid for: they eat the savings.
    assert (totals["cost_usd"], totals["saved_usd"]) == (9_000, -1_000)


def test_audit_cells() -> None:
    row = event_row(make_event(ts_unix_s=1_795_000_000.5, sensitivity=("pii", "secret"),
                               redacted=True))
    row |= {"chain_id": "c", "seq": 7}
    table = audit_table([row], ())
    cells = dict(zip((c.name for c in table.columns), table.rows[0], strict=True))
    assert cells["ts"] == "2026-11-18T11:06:40.500000+00:00"
    assert cells["cost_usd"] == 150 and cells["baseline_usd"] == 6000
    assert cells["sensitivity"] == "pii,secret" and cells["redacted"] == "yes"
    assert cells["spill_over"] == "no" and cells["seq"] == 7


@given(st.integers(0, 253_402_300_799_999_999),  # datetime.max, in microseconds
       st.text(min_size=1, max_size=48), st.integers(1, 2**62))
def test_cursors_round_trip(ts_us: int, chain_id: str, seq: int) -> None:
    cursor = Cursor(ts_us, chain_id, seq)
    assert Cursor.decode(cursor.encode()) == cursor


@pytest.mark.parametrize("text", ["garbage!", "WzEsMl0", "eyJhIjoxfQ", "W251bGwsIngiLDFd"])
def test_foreign_cursors_are_refused(text: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        Cursor.decode(text)
    assert caught.value.param == "cursor"


def test_limits_are_bounded() -> None:
    assert check_limit(1) == 1
    for bad in (0, 10_001):
        with pytest.raises(InvalidRequest):
            check_limit(bad)


POLICY = """\
version: 1
backends:
  - name: llama
    provider: vllm
    base_url: http://127.0.0.1:9/v1
    model: m
    context_window: 8192
    gpu: {type: H100, hourly_usd: 2.25, count: 2}
  - name: api
    provider: openai
    base_url: https://api.example.com/v1
    model: m
    zone: external
    context_window: 8192
    price_per_mtok_usd: {input: 1.0, output: 2.0}
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
"""


def test_declared_gpus_come_from_the_compiled_policy() -> None:
    assert declared_gpus(parse_policy(POLICY)) == [DeclaredGpus("llama", 4_500_000, 2)]


def test_savings_split_into_routing_savings_and_idle_capacity() -> None:
    # Served: baseline 8,000 µUSD against 500 of API spend and 1,500 of busy GPU share.
    # Paid by the clock with no request on it: 7,000 of idle GPUs.
    line = Line("acme", requests=10, api_micro_usd=500, gpu_micro_usd=1_500,
                baseline_micro_usd=8_000, self_hosted_requests=6, api_requests=3)
    idle = Line(IDLE, gpu_micro_usd=7_000, idle_gpu_micro_usd=7_000)
    table = savings_table("tenant", [line, idle], ())
    names = [c.name for c in table.columns]
    rows = {r[0]: dict(zip(names, r, strict=True)) for r in table.rows}
    assert (rows["acme"]["routing_saved_usd"], rows["acme"]["idle_gpu_usd"]) == (6_000, 0)
    assert (rows[IDLE]["routing_saved_usd"], rows[IDLE]["idle_gpu_usd"]) == (0, 7_000)
    totals = dict(zip(names, table.totals or (), strict=True))
    # 8,000 − 500 − 1,500 = 6,000 saved by routing; less 7,000 idle = −1,000, the one answer.
    assert totals["routing_saved_usd"] == 6_000 and totals["idle_gpu_usd"] == 7_000
    assert totals["saved_usd"] == -1_000 == totals["routing_saved_usd"] - totals["idle_gpu_usd"]
    assert totals["gpu_cost_usd"] == 8_500  # GPU-hours paid, of which 7,000 idle
