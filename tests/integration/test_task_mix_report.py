"""`gateway report routes`: the route mix by task type, exactly (by hand), from rows written by
the audit repository, on SQLite and Postgres; one tenant sees only its own requests."""

from __future__ import annotations

from datetime import UTC, datetime

from click.testing import CliRunner
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.reports.build import Scope, routes_report
from gateway.reports.periods import parse_period
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18T11:06:40Z
NOW = datetime(2026, 11, 22, tzinfo=UTC)
AWAY = dict(backend="gpt-frontier", zone="external", cost_micro_usd=5000)
BETA = dict(tenant_id="t-beta", tenant_name="beta", key_id="k-beta")


async def test_requests_cost_and_p_strong_by_task_and_backend(engine: AsyncEngine) -> None:
    events = [
        make_event(ts_unix_s=DAY, task="code", p_strong=0.2),
        make_event(ts_unix_s=DAY + 1, task="code", p_strong=0.8, **AWAY),
        make_event(ts_unix_s=DAY + 2, task="code", p_strong=0.6, **AWAY),
        make_event(ts_unix_s=DAY + 3, task="chat", p_strong=0.1),
        make_event(ts_unix_s=DAY + 4, task=None, p_strong=None, complexity=None),
        make_event(ts_unix_s=DAY + 5, task="chat", p_strong=0.3, **BETA),
        make_event(ts_unix_s=DAY - 86_400 * 5, task="math"),  # outside the period
    ]
    chain = Chain("r1")
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])
    period = parse_period("2026-11-18", "2026-11-19", NOW)

    table = await routes_report(engine, period, Scope(None, None, NOW))
    names = [c.name for c in table.columns]
    rows = [dict(zip(names, r, strict=True)) for r in table.rows]
    assert [(r["task"], r["backend"], r["requests"]) for r in rows] == [
        ("code", "gpt-frontier", 2), ("code", "llama-8b", 1),  # the busiest task first
        ("chat", "llama-8b", 2), ("(none)", "llama-8b", 1)]
    code_away = rows[0]
    assert code_away["share_of_task"] == 2 / 3 and code_away["cost_usd"] == 10_000
    assert abs(code_away["mean_p_strong"] - 0.7) < 1e-9
    assert rows[3]["mean_p_strong"] is None  # no complexity was scored
    assert table.totals is not None and table.totals[3] == 6
    meta = dict(table.meta)
    assert meta["self_hosted_share:code"] == "0.3333" and meta["self_hosted_share:chat"] == (
        "1.0000")

    acme = await routes_report(engine, period, Scope("t-acme", "acme", NOW))
    assert [(r[0], r[3]) for r in acme.rows] == [("code", 2), ("code", 1), ("(none)", 1),
                                                ("chat", 1)]
    assert sum(int(r[3]) for r in acme.rows) == 5  # beta's chat request is not acme's


def test_the_cli_lists_the_command() -> None:
    from gateway.cli.main import cli

    result = CliRunner().invoke(cli, ["report", "routes", "--help"])
    assert result.exit_code == 0 and "route mix by task type" in result.output
