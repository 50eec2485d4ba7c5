"""`gateway router calibrate`: thresholds and costs per share of strong calls, from a file of
prompts and from the traffic the audit log recorded (SQLite and Postgres)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.cli.main import cli
from tests.support.audit_events import make_event


def test_calibrate_on_prompts_orders_the_shares(tmp_path: Path) -> None:
    source = tmp_path / "prompts.jsonl"
    source.write_text(
        '{"prompt": "hi"}\n'
        '{"messages": [{"role": "user", "content": "Prove that the halting problem is'
        ' undecidable, then derive Rice\'s theorem from it."}]}\n'
        '{"prompt": "What is the capital of France?"}\n'
        '{"prompt": "Design a Byzantine fault tolerant replicated log and prove it safe."}\n',
        encoding="utf-8")
    result = CliRunner().invoke(cli, ["router", "calibrate", "--prompts", str(source),
                                      "--shares", "25,50,100"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("4 requests from")
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["25%", "50%", "100%"]
    thresholds = [float(r[1]) for r in rows]
    assert thresholds == sorted(thresholds, reverse=True)
    assert [int(r[2]) for r in rows] == [1, 2, 4]
    assert rows[-1][-1] == "0.0%"  # everything to the strong model saves nothing


def test_calibrate_names_a_bad_line_and_a_bad_share(tmp_path: Path) -> None:
    source = tmp_path / "prompts.jsonl"
    source.write_text('{"prompt": "hi"}\n{"text": "no prompt here"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["router", "calibrate", "--prompts", str(source)])
    assert result.exit_code == 1 and f"{source}:2: needs" in result.output
    result = CliRunner().invoke(cli, ["router", "calibrate", "--prompts", str(source),
                                      "--shares", "ten"])
    assert result.exit_code == 2 and "--shares" in result.output
    result = CliRunner().invoke(cli, ["router", "calibrate"])
    assert result.exit_code == 2 and "--prompts FILE or --from-audit" in result.output


async def test_calibrate_on_recorded_traffic(engine: AsyncEngine) -> None:
    now = time.time()
    events = [make_event(ts_unix_s=now - 60, p_strong=p, prompt_tokens=900,
                         completion_tokens=100) for p in (0.1, 0.2, 0.3, 0.9)]
    events.append(make_event(ts_unix_s=now - 60, p_strong=None))  # embeddings: not scored
    chain = Chain("cal")
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])
    url = engine.url.render_as_string(hide_password=False)
    result = await asyncio.to_thread(
        CliRunner().invoke, cli,
        ["router", "calibrate", "--from-audit", "--since", "1h", "--database-url", url,
         "--shares", "25", "--weak-usd-per-mtok", "1", "--strong-usd-per-mtok", "10"],
        env={"GATEWAY_DATABASE_URL": None}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("4 requests from the audit log (all tenants")
    share, threshold, calls, cost, saved = result.output.splitlines()[2].split()
    assert (share, threshold, calls) == ("25%", "0.9000", "1")
    # 1,000 tokens at $10/M + 3,000 at $1/M = $0.013, against $0.04 all-strong.
    assert cost == "$0.0130" and saved == "67.5%"
