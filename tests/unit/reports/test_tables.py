"""Query results → report tables: totals, savings arithmetic, ordering, audit cells, cursors
and GPU facts from the policy."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.audit.records import event_row
from gateway.errors import InvalidRequest
from gateway.policy.loader import parse_policy
from gateway.reports.audit_rows import Cursor, check_limit
from gateway.reports.gpus import gpu_facts
from gateway.reports.queries import CostLine, SavingsLine
from gateway.reports.tables import audit_table, cost_table, savings_table
from tests.support.audit_events import make_event


def test_cost_totals_add_up_and_big_spenders_come_first() -> None:
    lines = [CostLine("acme", 3, 1, 300, 60, 10, 1_000), CostLine("beta", 1, 0, 100, 20, 0, 9_000)]
    table = cost_table("tenant", lines, ())
    assert [r[0] for r in table.rows] == ["beta", "acme"]
    assert table.rows[0] == ("beta", 1, 0, 100, 20, 0, 120, 9_000)
    assert table.totals == ("total", 4, 1, 400, 80, 10, 480, 10_000)
    assert cost_table("day", lines, ()).rows[0][0] == "acme"  # days keep their order


def test_an_empty_cost_report_totals_zero() -> None:
    assert cost_table("tenant", [], ()).totals == ("total", 0, 0, 0, 0, 0, 0, 0)


def test_savings_against_the_baseline() -> None:
    line = SavingsLine("acme", requests=10, cost_micro_usd=2_000, baseline_cost_micro_usd=8_000,
                       self_hosted_requests=6, api_requests=3, self_hosted_tokens=900,
                       api_tokens=100, sensitive=4, sensitive_external=1, redacted=1)
    table = savings_table("tenant", [line], ())
    row = dict(zip((c.name for c in table.columns), table.rows[0], strict=True))
    assert row["saved_usd"] == 6_000 and row["saved_share"] == 0.75
    assert row["self_hosted_share"] == 6 / 9  # of the requests some backend served
    assert row["self_hosted_token_share"] == 0.9
    assert (row["sensitive"], row["sensitive_kept_home"], row["sensitive_external"]) == (4, 3, 1)
    assert table.totals is not None and table.totals[4] == 6_000


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


def test_gpu_facts_come_from_the_compiled_policy() -> None:
    facts = gpu_facts(parse_policy(POLICY))
    assert set(facts) == {"llama"}
    assert facts["llama"].hourly_usd == 4.5 and facts["llama"].count == 2
