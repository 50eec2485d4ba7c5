"""`gateway policy replay` over a real audit log (SQLite and Postgres): rows streamed in
keyset pages, re-decided under a new policy file, reported; the exit status flags sensitive
requests that would leave self_hosted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner, Result
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.range_repository import AuditRange, count_rows, stream_pages
from gateway.audit.records import Chain, Row, event_row, ts_datetime
from gateway.audit.repository import AuditRepository
from gateway.budget.pricing import cost_micro_usd
from gateway.cli.main import cli
from gateway.policy.loader import parse_policy
from gateway.types import Usage
from tests.support.audit_events import make_event
from tests.support.replay_policies import BACKENDS, FORGETFUL, IN_HOUSE, OLD

DAY_US = 1_795_000_000_000_000  # 2026-11-18T11:06:40Z, make_event's default time
SINCE, UNTIL = "2026-11-18", "2026-11-18"  # the whole day (a bare --until is its end)
HARD = {"complexity": "high", "p_strong": 0.9}


def recorded_rows() -> list[Row]:
    """A day under the OLD policy, as two replicas wrote it: 40 easy requests on the small
    model, 12 hard ones on the frontier, sensitive ones at home, and some that never
    reached a backend (skipped by the replay)."""
    old = parse_policy(OLD)
    events: list[dict[str, Any]] = []
    events += [{"backend": "small"} for _ in range(40)]
    for i in range(12):
        events.append({"backend": "frontier", "zone": "external", "predicted_ttft_s": 0.6,
                       "tenant_id": "t-globex" if i % 2 else "t-acme",
                       "tenant_name": "globex" if i % 2 else "acme", **HARD})
    events.append({"backend": "small", "sensitivity": ("pii",), "sensitive_types": ("email",),
                   **HARD})
    events.append({"backend": "small", "sensitivity": ("confidential",),
                   "sensitive_types": ("custom.project",), "request_id": "req-plan-x", **HARD})
    events.append({"backend": None, "rule": None, "zone": None, "status": 429,
                   "outcome": "error", "error_type": "rate_limit_error"})
    chains = [Chain("replica-a"), Chain("replica-b")]
    rows = []
    for i, changes in enumerate(events):
        changes.setdefault("tried", (changes["backend"],) if changes["backend"] else ())
        changes.setdefault("predicted_ttft_s", 0.1)
        event = make_event(ts_unix_s=(DAY_US + (i // 3) * 1_000_000) / 1e6,  # ties in ts
                           endpoint="chat/completions", **changes)
        row = event_row(event)
        if event.backend is not None:
            usage = Usage(event.prompt_tokens, event.completion_tokens, event.cached_tokens)
            row["cost_micro_usd"] = cost_micro_usd(usage, old.backends[event.backend].price)
        rows.append(chains[i % 2].link(row))
    return rows


async def store(engine: AsyncEngine, rows: list[Row]) -> None:
    repo = AuditRepository(engine)
    for chain in ("replica-a", "replica-b"):
        assert await repo.insert([r for r in rows if r["chain_id"] == chain])


async def gateway(*args: str) -> Result:
    """The CLI calls asyncio.run, which cannot nest: run it in a thread."""
    return await asyncio.to_thread(CliRunner().invoke, cli, list(args), catch_exceptions=False)


def replay_args(engine: AsyncEngine, policy: Path, *extra: str) -> list[str]:
    url = engine.url.render_as_string(hide_password=False)
    return ["policy", "replay", "--policy", str(policy), "--since", SINCE, "--until", UNTIL,
            "--database-url", url, *extra]


async def test_pages_follow_the_log_in_order_without_gaps_or_repeats(
    engine: AsyncEngine,
) -> None:
    rows = recorded_rows()
    late = Chain("replica-c").link(event_row(make_event(ts_unix_s=DAY_US / 1e6 + 86_400)))
    await store(engine, rows)
    await AuditRepository(engine).insert([late])  # the next day: outside the range
    span = AuditRange(ts_datetime(DAY_US), ts_datetime(DAY_US + 86_400_000_000 - 1))
    pages = [page async for page in stream_pages(engine, span, page_rows=4)]
    assert [len(p) for p in pages] == [4] * 13 + [3]
    read = [r for page in pages for r in page]
    expected = sorted(rows, key=lambda r: (r["ts"], r["chain_id"], r["seq"]))
    assert [(r["chain_id"], r["seq"]) for r in read] == [
        (r["chain_id"], r["seq"]) for r in expected]
    assert read[0] == expected[0]  # canonical rows, as written
    assert await count_rows(engine, span) == len(rows)

    by_name = AuditRange(span.since, span.until, "globex")
    by_id = AuditRange(span.since, span.until, "t-globex")
    named = [r["request_id"] async for page in stream_pages(engine, by_name, 5) for r in page]
    assert len(named) == 6 and await count_rows(engine, by_id) == 6


async def test_replay_reports_moved_traffic_cost_and_latency(
    engine: AsyncEngine, tmp_path: Path,
) -> None:
    rows = recorded_rows()
    await store(engine, rows)
    policy = tmp_path / "in-house.yaml"
    policy.write_text(IN_HOUSE)
    result = await gateway(*replay_args(engine, policy, "--format", "json", "--page-rows", "7"))
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert (report["rows_read"], report["replayed"]) == (55, 54)
    assert report["skipped"] == {"never routed (no rule or backend recorded)": 1}
    # The 12 hard requests on the frontier move in-house (the rule lists big-a first); the
    # hard sensitive ones already were at home and stay on the small model.
    assert report["changed"] == 12
    moves = {(m["before"], m["after"]): m["requests"] for m in report["moves"]}
    assert moves == {("small", "small"): 42, ("frontier", "big-a"): 12}
    new = parse_policy(IN_HOUSE)
    usage = Usage(1200, 300)
    per_request = (cost_micro_usd(usage, new.backends["big-a"].price)
                   - cost_micro_usd(usage, new.backends["frontier"].price))
    assert report["cost"]["delta_micro_usd"] == 12 * per_request
    by_tenant = {c["tenant"]: c["delta_micro_usd"] for c in report["cost_by_tenant"]}
    assert by_tenant == {"acme": 6 * per_request, "globex": 6 * per_request}
    assert report["ttft"]["requests"] == 54
    assert abs(report["ttft"]["mean_delta_s"] - 12 * (0.2 - 0.6) / 54) < 1e-9
    assert report["leaks"] == [] and report["sensitive"] == 2
    assert report["rows_per_s"] > 0

    table = await gateway(*replay_args(engine, policy, "--tenant", "globex"))
    assert table.exit_code == 0, table.output
    assert "none of the 0 sensitive requests replayed" in table.stdout
    assert "6 read, 6 replayed" in table.stdout


async def test_sensitive_requests_that_would_leave_fail_the_command(
    engine: AsyncEngine, tmp_path: Path,
) -> None:
    await store(engine, recorded_rows())
    policy = tmp_path / "forgetful.yaml"
    policy.write_text(FORGETFUL)  # forgets the tenant's "confidential" category
    result = await gateway(*replay_args(engine, policy, "--progress"))
    assert result.exit_code == 3, result.output
    assert "!!! 1 SENSITIVE REQUESTS WOULD LEAVE self_hosted WITHOUT REDACTION" in result.stdout
    assert "req-plan-x" in result.stdout and "confidential (custom.project)" in result.stdout
    assert "replayed 55/55 rows" in result.stderr  # --progress off a terminal: plain lines
    assert "rows/s" in result.stderr

    as_json = await gateway(*replay_args(engine, policy, "--format", "json"))
    assert as_json.exit_code == 3
    leaks = orjson.loads(as_json.stdout)["leaks"]
    assert [(x["request_id"], x["backend"], x["tenant"]) for x in leaks] == [
        ("req-plan-x", "frontier", "acme")]


async def test_a_policy_that_sends_pii_out_unredacted_does_not_even_load(
    engine: AsyncEngine, tmp_path: Path,
) -> None:
    await store(engine, recorded_rows())
    policy = tmp_path / "leaky.yaml"
    policy.write_text(BACKENDS + "rules:\n  - name: hard-out\n    when: {complexity: [high]}\n"
                      "    backends: [frontier]\n")
    result = await gateway(*replay_args(engine, policy))
    assert result.exit_code == 1
    assert "the policy does not validate" in result.stderr
    assert "requests with pii findings" in result.stderr and "leaky.yaml" in result.stderr

    policy.write_text(IN_HOUSE)
    bad = await gateway(*replay_args(engine, policy, "--since", "last tuesday"))
    assert bad.exit_code == 2 and "is not a time" in bad.stderr
