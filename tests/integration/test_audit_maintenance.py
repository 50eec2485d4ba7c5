"""Audit maintenance on SQLite and Postgres: `gateway audit verify` after tampering by SQL,
retention by dropping partitions, partitions made for a month the default partition holds,
and administrative actions (admin API, CLI, policy reloads) in an intact chain."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app import create_app
from gateway.audit.admin_repository import AdminLog
from gateway.audit.chain_repository import verify_range
from gateway.audit.partition_repository import (
    DEFAULT_PARTITION,
    ensure_partitions,
    list_partitions,
    month_start,
    partition_name,
    prune,
)
from gateway.audit.records import Chain, Row, event_row, ts_datetime
from gateway.audit.repository import AuditRepository
from gateway.cli.main import cli
from gateway.db.audit_tables import admin_audit, audit_chains, audit_content, audit_log
from gateway.settings import Settings
from tests.support.audit_events import make_event
from tests.support.servers import free_port, serve

ADMIN_KEY = "admin-test-key"
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
T0 = 1_795_000_000.0  # 2026-11-17


def url_of(engine: AsyncEngine) -> str:
    return engine.url.render_as_string(hide_password=False)


async def run_cli(engine: AsyncEngine, *args: str, **env: str) -> Result:
    """`gateway ARGS` in a thread (the CLI calls asyncio.run, which cannot nest)."""
    return await asyncio.to_thread(
        CliRunner().invoke, cli, list(args),
        env={"GATEWAY_DATABASE_URL": url_of(engine), **env}, catch_exceptions=False,
    )


async def store(engine: AsyncEngine, chain_id: str, stamps: list[float]) -> list[Row]:
    chain = Chain(chain_id)
    rows = [chain.link(event_row(make_event(ts_unix_s=ts))) for ts in stamps]
    assert await AuditRepository(engine).insert(rows) == len(rows)
    return rows


def at(iso: str) -> datetime:
    return datetime.fromisoformat(iso).replace(tzinfo=UTC)


async def test_verify_names_the_row_changed_by_sql(engine: AsyncEngine) -> None:
    rows = await store(engine, "replica-a", [T0 + i for i in range(6)])
    await store(engine, "replica-b", [T0 + i + 0.5 for i in range(4)])
    report = await verify_range(engine, None, None, page_rows=2)  # several pages per chain
    assert report.ok and (report.chains, report.rows) == (2, 10)
    ok = await run_cli(engine, "audit", "verify")
    assert ok.exit_code == 0 and "ok: 10 rows in 2 chains" in ok.stdout

    async with engine.begin() as conn:
        await conn.execute(update(audit_log).where(
            audit_log.c.chain_id == "replica-a", audit_log.c.seq == 4
        ).values(cost_micro_usd=1))
    broken = await run_cli(engine, "audit", "verify", "--since", "2026-11-17")
    assert broken.exit_code == 1
    first = broken.stdout.splitlines()[0]
    assert first == (f"BROKEN: first broken link: chain replica-a seq 4 request "
                     f"{rows[3]['request_id']} at {ts_datetime(rows[3]['ts']).isoformat()}:"
                     " row_hash does not match the row's content (altered)")
    # A window that ends before the changed row does not see it.
    before = await verify_range(engine, None, ts_datetime(rows[3]["ts"]))
    assert before.ok


async def test_verify_finds_a_row_deleted_at_the_start_of_the_range(engine: AsyncEngine) -> None:
    rows = await store(engine, "replica-a", [T0 + 60 * i for i in range(6)])
    async with engine.begin() as conn:
        await conn.execute(delete(audit_log).where(audit_log.c.seq == 3))
    since = ts_datetime(rows[2]["ts"])  # the range starts at the deleted row
    report = await verify_range(engine, since, None)
    assert report.first is not None
    assert (report.first.seq, report.first.request_id) == (4, rows[3]["request_id"])
    assert "row 3 is missing" in report.first.problem


async def test_verify_finds_rows_cut_off_the_end(engine: AsyncEngine) -> None:
    await store(engine, "replica-a", [T0 + i for i in range(5)])
    async with engine.begin() as conn:
        await conn.execute(delete(audit_log).where(audit_log.c.seq >= 4))
    result = await run_cli(engine, "audit", "verify")
    assert result.exit_code == 1
    assert "chain replica-a seq 4" in result.stdout
    assert "rows 4..5 are cut off the end of the chain" in result.stdout


async def test_prune_drops_old_months_and_keeps_the_rollups(engine: AsyncEngine) -> None:
    postgres = engine.dialect.name == "postgresql"
    this_month = month_start(datetime.now(UTC).date())
    last_month = month_start(this_month, -1)
    old = datetime(*month_start(this_month, -6).timetuple()[:3], 12, tzinfo=UTC).timestamp()
    previous = datetime(*last_month.timetuple()[:3], 12, tzinfo=UTC).timestamp()
    current = datetime.now(UTC).timestamp() - 60
    # One chain across all three: six months ago (the default partition in Postgres), last
    # month (its own partition) and now.
    await store(engine, "replica-a", [old, old + 1, previous, previous + 1, current])
    await store(engine, "replica-gone", [old + 2])  # a chain that ends long ago
    async with engine.begin() as conn:
        await conn.execute(audit_content.insert(), [
            {"request_id": "r-old", "ts": ts_datetime(int(old * 1e6)), "tenant_id": "t",
             "prompt": "p", "response": "r"},
            {"request_id": "r-new", "ts": ts_datetime(int(current * 1e6)), "tenant_id": "t",
             "prompt": "p", "response": "r"},
        ])
        daily_before = await conn.scalar(select(func.count()).select_from(text("audit_daily")))
    cutoff = datetime(this_month.year, this_month.month, this_month.day, tzinfo=UTC)

    dry = await prune(engine, cutoff, dry_run=True)
    # Postgres drops last month's partition whole and deletes the default partition's rows.
    assert (len(dry.dropped), dry.deleted_rows) == ((1, 3) if postgres else (0, 5))
    assert (dry.deleted_content, dry.deleted_heads) == (1, 1)
    async with engine.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(audit_log)) == 6

    result = await run_cli(engine, "audit", "prune", "--older-than", cutoff.date().isoformat())
    assert result.exit_code == 0, result.output
    async with engine.connect() as conn:
        left = [(r.chain_id, r.seq) for r in await conn.execute(
            select(audit_log.c.chain_id, audit_log.c.seq).order_by(audit_log.c.seq))]
        contents = [r.request_id for r in await conn.execute(select(audit_content))]
        heads = {r.chain_id for r in await conn.execute(select(audit_chains))}
        daily_after = await conn.scalar(select(func.count()).select_from(text("audit_daily")))
        names = [p.name for p in await list_partitions(conn)] if postgres else []
        prune_record = (await conn.execute(select(admin_audit))).one()
    assert left == [("replica-a", 5)]
    assert contents == ["r-new"]
    assert heads == {"replica-a", "admin"}  # the chain without rows lost its head
    assert daily_after == daily_before  # reports over old months keep working
    assert prune_record.action == "audit.prune"
    if postgres:
        assert f"dropped partition {partition_name(last_month)} (2 rows" in result.stdout
        assert partition_name(last_month) not in names
        assert partition_name(this_month) in names and DEFAULT_PARTITION in names
        assert "removed 3 older rows" in result.stdout  # from the default partition
    # What is left still verifies: its first row is an anchor now.
    assert (await verify_range(engine, None, None)).ok


@pytest.mark.postgres
@pytest.mark.parametrize("engine", ["postgres"], indirect=True)  # partitions: Postgres only
async def test_a_partition_takes_over_the_rows_the_default_partition_holds(
    engine: AsyncEngine,
) -> None:
    this_month = month_start(datetime.now(UTC).date())
    far = month_start(this_month, 3)
    async with engine.begin() as conn:  # as if nobody had made that month's partition
        await conn.execute(text(f"DROP TABLE {partition_name(far)}"))
    mid = datetime(far.year, far.month, 15, tzinfo=UTC).timestamp()
    rows = await store(engine, "replica-a", [mid, mid + 1, mid + 2])
    async with engine.connect() as conn:
        assert await conn.scalar(text(f"SELECT count(*) FROM {DEFAULT_PARTITION}")) == 3

    result = await run_cli(engine, "audit", "partitions", "--ensure-ahead", "3")
    assert result.exit_code == 0, result.output
    assert f"created {partition_name(far)}" in result.stderr
    listed = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()}
    assert listed[partition_name(far)] == [f"[{far},", f"{month_start(far, 1)})", "3", "rows"]
    assert listed[DEFAULT_PARTITION] == ["DEFAULT", "0", "rows"]
    async with engine.connect() as conn:
        assert await conn.scalar(text(f"SELECT count(*) FROM {DEFAULT_PARTITION}")) == 0
    # The moved rows are intact, and the partition has the primary key: a replay is a no-op.
    assert (await verify_range(engine, None, None)).ok
    assert await AuditRepository(engine).insert(rows) == 0
    assert await ensure_partitions(engine, 3) == []


async def test_admin_actions_from_the_api_the_cli_and_reloads_form_one_chain(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{free_port()}/v1\n    model: sim-model\n"
        "    context_window: 1024\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\nmodels:\n  auto: [sim]\n"
    )
    settings = Settings(database_url=url_of(engine), admin_key=ADMIN_KEY,
                        policy_path=policy_path, audit_spool_dir=tmp_path / "spool")
    with serve(create_app(settings)) as server:
        async with httpx.AsyncClient(base_url=server.url, headers=ADMIN, timeout=10) as api:
            assert (await api.post("/admin/tenants", json={"name": "acme"})).status_code == 201
            made = (await api.post("/admin/tenants/acme/keys", json={"name": "ci"})).json()
            assert (await api.put("/admin/tenants/acme/limits/tenant",
                                  json={"limits": {"rpm": 10}})).status_code == 200
            assert (await api.delete("/admin/tenants/acme/limits/tenant")).status_code == 200
            assert (await api.post(f"/admin/keys/{made['id']}/revoke")).status_code == 200
            assert (await api.post("/admin/tenants/acme/disable")).status_code == 200
            assert (await api.post("/admin/policy/reload")).status_code == 200
            # The reload is recorded by a task of the gateway's: wait for it.
            for _ in range(100):
                async with engine.connect() as conn:
                    actions = list(await conn.scalars(select(admin_audit.c.action)))
                if "policy.reload" in actions:
                    break
                await asyncio.sleep(0.05)
    cli_key = await run_cli(engine, "keys", "create", "--tenant", "globex")
    assert cli_key.exit_code == 0, cli_key.output
    assert (await run_cli(engine, "tenants", "enable", "acme")).exit_code == 0
    assert (await run_cli(engine, "budgets", "set", "globex", "--rpm", "5",
                          GATEWAY_POLICY_PATH=str(policy_path))).exit_code == 0

    async with engine.connect() as conn:
        stored = [r._asdict() for r in await conn.execute(
            select(admin_audit).order_by(admin_audit.c.seq))]
        head = (await conn.execute(
            select(audit_chains).where(audit_chains.c.chain_id == "admin"))).one()
    assert [(r["actor"], r["action"], r["target"]) for r in stored] == [
        ("admin-api", "tenant.create", "acme"),
        ("admin-api", "key.create", "acme"),
        ("admin-api", "limits.set", "acme/tenant"),
        ("admin-api", "limits.clear", "acme/tenant"),
        ("admin-api", "key.revoke", made["id"]),
        ("admin-api", "tenant.disable", "acme"),
        (stored[6]["actor"], "policy.reload", str(policy_path)),
        (stored[7]["actor"], "tenant.create", "globex"),
        (stored[7]["actor"], "key.create", "globex"),
        (stored[7]["actor"], "tenant.enable", "acme"),
        (stored[7]["actor"], "limits.set", "globex/tenant"),
    ]
    assert stored[6]["actor"].startswith("gateway:") and stored[7]["actor"].startswith("cli:")
    assert stored[1]["details"] == {"key_id": made["id"], "prefix": made["prefix"],
                                    "name": "ci"}
    assert stored[6]["details"]["sha256"] and len(stored[6]["details"]["sha256"]) == 64
    assert stored[8]["details"]["prefix"] and stored[2]["details"]["limits"] == {"rpm": 10}
    # No key is ever recorded, only ids and display prefixes.
    everything = repr(stored)
    assert made["key"] not in everything and cli_key.stdout.strip() not in everything
    assert (head.seq, [r["seq"] for r in stored]) == (11, list(range(1, 12)))

    report = await verify_range(engine, None, None)
    assert report.ok and report.rows == 11
    async with engine.begin() as conn:  # an administrator covering their tracks
        await conn.execute(delete(admin_audit).where(admin_audit.c.seq == 5))
    broken = (await verify_range(engine, None, None)).first
    assert broken is not None and (broken.chain_id, broken.seq) == ("admin", 6)
    assert "row 5 is missing" in broken.problem


async def test_concurrent_admin_actions_never_share_a_seq(engine: AsyncEngine) -> None:
    log = AdminLog(engine)
    await asyncio.gather(*(log.record("admin-api", "tenant.create", f"t{i}") for i in range(8)))
    async with engine.connect() as conn:
        seqs = sorted(await conn.scalars(select(admin_audit.c.seq)))
    assert seqs == list(range(1, 9))
    assert (await verify_range(engine, None, None)).ok
