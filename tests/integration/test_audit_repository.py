"""The audit write path on SQLite and Postgres: chained rows, rollups, idempotent replay."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row, from_db, row_hash
from gateway.audit.repository import AuditRepository
from gateway.db.audit_tables import (
    audit_chains,
    audit_content,
    audit_daily,
    audit_latency,
    audit_log,
    backend_busy_minutes,
)
from gateway.types import AuditContent
from tests.support.audit_events import make_event


async def test_rows_round_trip_with_their_hashes(engine: AsyncEngine) -> None:
    chain = Chain("replica-a")
    rows = [chain.link(event_row(make_event(ts_unix_s=1_795_000_000.123457 + i)))
            for i in range(3)]
    repo = AuditRepository(engine)
    assert await repo.insert(rows) == 3
    async with engine.connect() as conn:
        stored = [from_db(r._asdict()) for r in await conn.execute(
            select(audit_log).order_by(audit_log.c.seq))]
    assert [r["seq"] for r in stored] == [1, 2, 3]
    for original, back in zip(rows, stored, strict=True):
        assert back == original  # nothing lost or rounded on the way
        assert row_hash(back) == back["row_hash"]
    assert stored[1]["prev_hash"] == stored[0]["row_hash"]
    assert await repo.chain_head("replica-a") == (3, rows[-1]["row_hash"])


async def test_replaying_a_batch_changes_nothing(engine: AsyncEngine) -> None:
    chain = Chain("replica-a")
    rows = [chain.link(event_row(make_event())) for _ in range(4)]
    repo = AuditRepository(engine)
    assert await repo.insert(rows[:2]) == 2
    assert await repo.insert(rows) == 2  # the first two were already there
    async with engine.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(audit_log)) == 4
        daily = (await conn.execute(select(audit_daily))).one()
    assert daily.requests == 4
    assert daily.cost_micro_usd == 4 * 150
    assert daily.baseline_cost_micro_usd == 4 * 6000
    assert daily.prompt_tokens == 4 * 1200


async def test_rollups_fold_by_day_tenant_backend_and_rule(engine: AsyncEngine) -> None:
    chain = Chain("replica-b")
    day = 1_795_000_000.0
    events = [
        make_event(ts_unix_s=day),
        make_event(ts_unix_s=day + 10, sensitivity=("pii",), sensitive_types=("email",)),
        make_event(ts_unix_s=day + 20, backend="gpt-frontier", zone="external",
                   sensitivity=("pii",), redacted=True, cost_micro_usd=5000),
        make_event(ts_unix_s=day + 30, status=502, outcome="error", error_type="upstream"),
        make_event(ts_unix_s=day + 86_400),  # the next day
    ]
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])
    async with engine.connect() as conn:
        daily = {
            (r.day.isoformat(), r.backend): r
            for r in await conn.execute(select(audit_daily))
        }
        latency = dict((await conn.execute(
            select(audit_latency.c.tenant_id, func.sum(audit_latency.c.count))
            .where(audit_latency.c.metric == "total").group_by(audit_latency.c.tenant_id)
        )).all())
        busy = await conn.scalar(select(func.count()).select_from(backend_busy_minutes))
        head = (await conn.execute(select(audit_chains))).one()
    home = daily[("2026-11-18", "llama-8b")]
    assert (home.requests, home.errors, home.sensitive, home.sensitive_external) == (3, 1, 1, 0)
    away = daily[("2026-11-18", "gpt-frontier")]
    assert (away.sensitive, away.sensitive_external, away.redacted) == (1, 1, 1)
    assert away.zone == "external" and away.cost_micro_usd == 5000
    assert daily[("2026-11-19", "llama-8b")].requests == 1
    assert home.kv_hit_count == 3 and abs(home.kv_hit_sum - 1.5) < 1e-9
    # The failed request has no latency sample; every sample also counts fleet-wide ("*").
    assert latency == {"t-acme": 4, "*": 4}
    assert busy >= 3
    assert head.seq == 5


async def test_opted_in_content_is_stored_beside_the_row_outside_its_hash(
    engine: AsyncEngine,
) -> None:
    chain = Chain("replica-c")
    event = make_event(content=AuditContent("Mail <EMAIL_1> now", "Done."))
    row = chain.link(event_row(event))
    bare = {k: v for k, v in row.items() if k != "content"}
    assert row_hash(bare) == row["row_hash"]
    assert await AuditRepository(engine).insert([row, chain.link(event_row(make_event()))]) == 2
    async with engine.connect() as conn:
        stored = (await conn.execute(select(audit_content))).all()
    assert [(r.request_id, r.prompt, r.response) for r in stored] == [
        (event.request_id, "Mail <EMAIL_1> now", "Done.")
    ]


async def test_awkward_values_round_trip_exactly(engine: AsyncEngine) -> None:
    """Floats that need all 17 digits, non-ASCII and escaped text, a backslash-u0000 spelled
    out (on Postgres that batch goes as arrays): stored and read back as they were hashed."""
    chain = Chain("replica-c")
    rows = [chain.link(event_row(make_event(
        ts_unix_s=1_795_000_000.000001 + i, duration_s=0.1 + 0.2, ttft_s=1e-5 / 3,
        p_strong=2 / 3, tenant_name=name, requested_model='m"\\/\t',
    ))) for i, name in enumerate(["Zürich ☃", "a\U0001f600b", "plain"])]
    escaped = chain.link(event_row(make_event(tenant_name="literal \\u0000 text")))
    repo = AuditRepository(engine)
    assert await repo.insert(rows) == 3
    assert await repo.insert([escaped]) == 1
    async with engine.connect() as conn:
        stored = [from_db(r._asdict()) for r in await conn.execute(
            select(audit_log).where(audit_log.c.chain_id == "replica-c")
            .order_by(audit_log.c.seq))]
    assert stored == [*rows, escaped]
    assert all(row_hash(r) == r["row_hash"] for r in stored)
