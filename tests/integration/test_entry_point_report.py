"""`gateway report apis`: traffic by the API the client called, from rows written by the audit
repository (SQLite and Postgres); rows from before the entry point was recorded count by their
endpoint, and both kinds of row keep verifying."""

from __future__ import annotations

from datetime import UTC, datetime

from click.testing import CliRunner
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row, row_hash
from gateway.audit.repository import AuditRepository
from gateway.reports.build import Scope, apis_report
from gateway.reports.periods import parse_period
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18T11:06:40Z
NOW = datetime(2026, 11, 22, tzinfo=UTC)


async def test_traffic_by_entry_point_old_rows_by_their_endpoint(engine: AsyncEngine) -> None:
    events = [
        make_event(ts_unix_s=DAY, entry_point="messages", cost_micro_usd=300),
        make_event(ts_unix_s=DAY + 1, entry_point="messages", cost_micro_usd=200,
                   status=429, outcome="error", completion_tokens=0),
        make_event(ts_unix_s=DAY + 2, entry_point="responses", cost_micro_usd=50),
        make_event(ts_unix_s=DAY + 3, entry_point="chat", cost_micro_usd=10),
        # Written before the entry point was recorded: its endpoint says chat.
        make_event(ts_unix_s=DAY + 4, entry_point=None, cost_micro_usd=1),
        make_event(ts_unix_s=DAY + 5, entry_point=None, endpoint="embeddings",
                   cost_micro_usd=0, tenant_id="t-beta", tenant_name="beta"),
    ]
    chain = Chain("r1")
    rows = [chain.link(event_row(e)) for e in events]
    assert rows[0]["trace"]["api"] == "messages" and "api" not in (rows[4]["trace"] or {})
    await AuditRepository(engine).insert(rows)
    period = parse_period("2026-11-18", "2026-11-19", NOW)

    table = await apis_report(engine, period, Scope(None, None, NOW))
    assert [(r[0], r[1], r[2], r[5]) for r in table.rows] == [
        ("chat", 2, 0, 11), ("messages", 2, 1, 500), ("embeddings", 1, 0, 0),
        ("responses", 1, 0, 50)]
    assert table.totals is not None and table.totals[1] == 6 and table.totals[5] == 561
    acme = await apis_report(engine, period, Scope("t-acme", "acme", NOW))
    assert sum(int(r[1]) for r in acme.rows) == 5  # beta's embeddings row is not acme's

    # The hash covers the entry point: a row re-labelled afterwards no longer verifies.
    relabelled = {**rows[0], "trace": {**rows[0]["trace"], "api": "chat"}}
    assert row_hash(rows[0]) == rows[0]["row_hash"]
    assert row_hash(relabelled) != rows[0]["row_hash"]
    assert row_hash(rows[4]) == rows[4]["row_hash"]  # an old-style row hashes as before


def test_the_cli_lists_the_command() -> None:
    from gateway.cli.main import cli

    result = CliRunner().invoke(cli, ["report", "apis", "--help"])
    assert result.exit_code == 0 and "entry point" in result.output
