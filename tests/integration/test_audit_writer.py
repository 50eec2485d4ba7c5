"""The audit writer on real SQLite (the embedded default) and real Postgres: under load every
row is stored once with its chain intact, and rows spooled while the database was
unreachable reach it on the next start."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import GENESIS, from_db, row_hash
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from gateway.db.audit_tables import audit_daily, audit_log
from gateway.db.engine import create_engine
from tests.support.audit_events import make_event
from tests.support.servers import free_port


async def stored_chain(engine: AsyncEngine, chain_id: str) -> list[int]:
    """The chain's seqs in order, after checking every link and hash."""
    async with engine.connect() as conn:
        rows = [from_db(r._asdict()) for r in await conn.execute(
            select(audit_log).where(audit_log.c.chain_id == chain_id).order_by(audit_log.c.seq))]
    head = GENESIS
    for row in rows:
        assert row["prev_hash"] == head and row_hash(row) == row["row_hash"], row["seq"]
        head = row["row_hash"]
    return [r["seq"] for r in rows]


async def daily_requests(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int(await conn.scalar(select(func.sum(audit_daily.c.requests))) or 0)


async def test_every_row_of_a_busy_writer_is_stored_once_in_chain_order(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    audit = AuditWriter(AuditRepository(engine), Spool(tmp_path / "spool"), chain_id="load")
    await audit.start()
    per_task, tasks = 2500, 8

    async def requests(task: int) -> None:
        for i in range(per_task):
            audit.record(make_event(ts_unix_s=1_795_000_000.0 + i / 1000,
                                    request_id=f"load-{task}-{i}"))
            if i % 50 == 0:
                await asyncio.sleep(0)  # interleave with the other tasks and the writer

    await asyncio.gather(*(requests(t) for t in range(tasks)))
    deadline = time.monotonic() + 120
    while audit.backlog:  # the writer catches up on its own (stop() would spool the rest)
        assert time.monotonic() < deadline, f"{audit.backlog} rows still queued"
        await asyncio.sleep(0.1)
    await audit.stop()
    total = per_task * tasks
    assert await stored_chain(engine, "load") == list(range(1, total + 1))
    assert await daily_requests(engine) == total
    assert audit.stats.rows_written == total and audit.stats.rows_spooled == 0
    async with engine.connect() as conn:
        ids = await conn.scalar(select(func.count(func.distinct(audit_log.c.request_id))))
    assert ids == total


async def test_rows_spooled_while_the_database_was_unreachable_reach_it_on_next_start(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    spool_dir = tmp_path / "spool"
    unreachable = create_engine(
        f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nowhere")
    try:
        down = AuditWriter(AuditRepository(unreachable), Spool(spool_dir), chain_id="outage",
                           interval_s=0.05, retry_min_s=0.05)
        await down.start()
        for i in range(1500):
            down.record(make_event(request_id=f"outage-{i}"))
            if i % 300 == 0:
                await asyncio.sleep(0.06)  # several batches, several failed attempts
        await down.stop()
    finally:
        await unreachable.dispose()
    assert down.stats.rows_written == 0 and down.numbers()["spool_rows"] == 1500
    assert down.stats.write_failures >= 1 and down.problem is None

    back = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="after",
                       interval_s=0.05)
    await back.start()
    back.record(make_event(request_id="after-1"))
    await back.stop()
    assert await stored_chain(engine, "outage") == list(range(1, 1501))
    assert await stored_chain(engine, "after") == [1]
    assert await daily_requests(engine) == 1501
    assert back.numbers()["spool_rows"] == 0


async def test_a_database_that_never_answers_diverts_rows_to_the_spool(tmp_path: Path) -> None:
    """A socket that accepts connections and says nothing: only the insert timeout ends the
    wait, and the writer moves on to the spool."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        hung = create_engine(f"postgresql+asyncpg://postgres@127.0.0.1:{port}/nowhere")
        try:
            audit = AuditWriter(AuditRepository(hung), Spool(tmp_path / "spool"),
                                chain_id="hung", interval_s=0.05, insert_timeout_s=0.3,
                                stop_timeout_s=1.0)
            await audit.start()
            for i in range(20):
                audit.record(make_event(request_id=f"hung-{i}"))
            deadline = time.monotonic() + 10
            while audit.numbers()["spool_rows"] < 20:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await audit.stop()
        finally:
            await hung.dispose()
    assert audit.stats.write_failures >= 1 and audit.stats.dropped == 0
    assert audit.numbers()["spool_rows"] == 20
