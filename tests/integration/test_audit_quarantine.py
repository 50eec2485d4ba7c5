"""A row the database refuses never stalls the audit log, on SQLite and Postgres: the rows
around it are stored, it goes to the quarantine file (alarm, count, ERROR log), the spool
drains and later rows flow; verify calls the gap quarantined rather than tampering, and
`gateway audit quarantine --retry` stores it once its cause is gone.

The refusal is real: a constraint the test adds to the database (a CHECK in Postgres, a
trigger in SQLite) refuses rows for model "poison". The NUL tests bypass records.fit_row by
writing straight to the spool, as an older version of the gateway could have left it."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.chain_repository import verify_range
from gateway.audit.quarantine import (
    Quarantine,
    QuarantineFile,
    quarantine_path,
    read_quarantine,
    refused,
)
from gateway.audit.records import Chain, Row, event_row
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.verify import Gap
from gateway.audit.writer import AuditWriter
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from tests.integration.test_audit_maintenance import run_cli
from tests.support.audit_events import make_event
from tests.support.databases import clear_schema
from tests.support.servers import free_port

FAST = {"interval_s": 0.02, "retry_min_s": 0.02, "retry_max_s": 0.1}


async def refuse_poison(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            await conn.execute(text("ALTER TABLE audit_log ADD CONSTRAINT refuse_poison "
                                    "CHECK (requested_model <> 'poison')"))
        else:
            await conn.execute(text(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON audit_log "
                "WHEN NEW.requested_model = 'poison' "
                "BEGIN SELECT RAISE(ABORT, 'refuse_poison: no poison here'); END"))


async def accept_poison(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            await conn.execute(text("ALTER TABLE audit_log DROP CONSTRAINT refuse_poison"))
        else:
            await conn.execute(text("DROP TRIGGER refuse_poison"))


async def stored_seqs(engine: AsyncEngine, chain_id: str) -> list[int]:
    async with engine.connect() as conn:
        return list((await conn.scalars(select(audit_log.c.seq).where(
            audit_log.c.chain_id == chain_id).order_by(audit_log.c.seq))).all())


async def drained(audit: AuditWriter, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while audit.backlog or audit.numbers()["spool_rows"]:
        assert time.monotonic() < deadline, f"backlog {audit.numbers()}"
        await asyncio.sleep(0.02)


async def test_a_refused_row_is_quarantined_and_every_other_row_flows(
    engine: AsyncEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await refuse_poison(engine)
    spool_dir = tmp_path / "spool"
    audit = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="poison", **FAST)
    await audit.start()
    with caplog.at_level(logging.ERROR, "gateway.audit"):
        for i in range(40):  # one batch: the refused row is found by halving it
            audit.record(make_event(request_id=f"q-{i}",
                                    requested_model="poison" if i == 17 else "auto"))
        await drained(audit)
    assert audit.numbers()["rows_quarantined"] == 1 and audit.numbers()["alarm"] == 1
    assert audit.problem is not None and "quarantined" in audit.problem
    assert "q-17" in caplog.text and "refuse_poison" in caplog.text
    for i in range(5):
        audit.record(make_event(request_id=f"later-{i}"))
    await drained(audit)
    await audit.stop()
    assert await stored_seqs(engine, "poison") == [s for s in range(1, 46) if s != 18]
    assert audit.stats.rows_written == 44 and audit.stats.write_failures == 0

    entries = read_quarantine(quarantine_path(spool_dir))
    assert [(e.key, e.row["request_id"], e.intact, e.stored) for e in entries] == [
        (("poison", 18), "q-17", True, False)]
    assert "refuse_poison" in entries[0].error

    plain = await verify_range(engine, None, None)
    assert [(b.seq, b.problem) for b in plain.breaks] == [
        (19, "row 18 is missing before this row (deleted?)")]
    held = {e.key: e.row for e in entries}
    report = await verify_range(engine, None, None, quarantined=held)
    assert report.ok and report.gaps == [Gap("poison", 18, 18)]

    listed = await run_cli(engine, "audit", "quarantine", "--quarantine",
                           str(quarantine_path(spool_dir)))
    assert "waiting: chain poison seq 18 request q-17" in listed.output
    verified = await run_cli(engine, "audit", "verify", "--quarantine",
                             str(quarantine_path(spool_dir)))
    assert verified.exit_code == 3, verified.output
    assert "chain poison seq 18: not in the database: quarantined (see" in verified.output

    await accept_poison(engine)  # the operator removed the cause
    retried = await run_cli(engine, "audit", "quarantine", "--retry", "--quarantine",
                            str(quarantine_path(spool_dir)))
    assert retried.exit_code == 0 and "1 stored, 0 still waiting" in retried.output
    assert await stored_seqs(engine, "poison") == list(range(1, 46))
    assert (await verify_range(engine, None, None)).ok
    assert [e.stored for e in read_quarantine(quarantine_path(spool_dir))] == [True]


async def test_a_row_altered_in_the_quarantine_file_is_still_a_broken_link(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    await refuse_poison(engine)
    spool_dir = tmp_path / "spool"
    audit = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="edited", **FAST)
    await audit.start()
    for i in range(6):
        audit.record(make_event(requested_model="poison" if i == 2 else "auto"))
    await drained(audit)
    await audit.stop()
    [entry] = read_quarantine(quarantine_path(spool_dir))
    altered = {**entry.row, "cost_micro_usd": 1}
    report = await verify_range(engine, None, None, quarantined={entry.key: altered})
    assert [(b.seq, b.problem) for b in report.breaks] == [
        (4, "row 3 is missing before this row (deleted?)")]
    assert report.gaps == []


def nul_rows(chain_id: str, count: int, bad: set[int]) -> list[Row]:
    """Chained rows with a NUL in the requested model of the `bad` ones, hashed as they are:
    what fit_row would have prevented."""
    chain = Chain(chain_id)
    rows = []
    for i in range(count):
        row = event_row(make_event(request_id=f"{chain_id}-{i}"))
        if i in bad:
            row["requested_model"] = "gpt\x00-4o"
        rows.append(chain.link(row))
    return rows


@pytest.mark.postgres
async def test_a_spooled_row_postgres_refuses_does_not_stall_the_replay(
    postgres_url: str, tmp_path: Path
) -> None:
    """NUL in a text column: Postgres refuses it (SQLSTATE 22021) however often it is sent."""
    engine = create_engine(postgres_url)
    try:
        await clear_schema(engine)
        await upgrade(engine)
        with pytest.raises(Exception) as refusal:
            await AuditRepository(engine).insert(nul_rows("probe", 1, {0}))
        assert refused(refusal.value)

        spool_dir = tmp_path / "spool"
        left = Spool(spool_dir)  # what an earlier process left behind
        await left.open()
        await left.append(nul_rows("older", 300, {5, 150, 151, 299}))
        left.close()
        audit = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="newer",
                            batch_size=100, **FAST)
        await audit.start()
        for i in range(10):
            audit.record(make_event(request_id=f"newer-{i}"))
        await drained(audit)
        await audit.stop()
        assert await stored_seqs(engine, "older") == [
            s for s in range(1, 301) if s - 1 not in {5, 150, 151, 299}]
        assert await stored_seqs(engine, "newer") == list(range(1, 11))
        entries = read_quarantine(quarantine_path(spool_dir))
        assert sorted(e.row["seq"] for e in entries) == [6, 151, 152, 300]
        assert all("0x00" in e.error for e in entries)
        assert audit.numbers()["rows_quarantined"] == 4 and audit.numbers()["spool_rows"] == 0
        report = await verify_range(engine, None, None,
                                    quarantined={e.key: e.row for e in entries})
        assert report.ok
        assert sorted((g.first, g.last) for g in report.gaps) == [
            (6, 6), (151, 152), (300, 300)]
    finally:
        await engine.dispose()


async def test_an_unavailable_database_is_not_a_refusal(tmp_path: Path) -> None:
    """Connection refused: the rows wait in the spool, nothing is quarantined."""
    down = create_engine(f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nowhere")
    try:
        with pytest.raises(Exception) as failure:
            await AuditRepository(down).insert(nul_rows("down", 1, set()))
        assert not refused(failure.value)
        audit = AuditWriter(AuditRepository(down), Spool(tmp_path / "spool"), chain_id="down",
                            **FAST)
        await audit.start()
        for _ in range(5):
            audit.record(make_event())
        await audit.stop()
    finally:
        await down.dispose()
    assert audit.numbers()["spool_rows"] == 5 and audit.numbers()["rows_quarantined"] == 0
    assert read_quarantine(quarantine_path(tmp_path / "spool")) == []


async def test_when_the_quarantine_file_fails_the_refused_batch_waits_in_the_spool(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    await refuse_poison(engine)
    blocked = tmp_path / "quarantine.jsonl"
    blocked.mkdir()  # a directory where the file should be: every append fails
    spool_dir = tmp_path / "spool"
    audit = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="blocked",
                        quarantine=Quarantine(QuarantineFile(blocked)), **FAST)
    await audit.start()
    for i in range(8):
        audit.record(make_event(requested_model="poison" if i == 3 else "auto"))
    deadline = time.monotonic() + 10
    while not audit.numbers()["spool_rows"]:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    assert audit.problem is not None and "quarantine file" in audit.problem
    assert audit.numbers()["rows_quarantined"] == 0
    blocked.rmdir()  # the operator frees the path: replay quarantines the row and drains
    await drained(audit)
    await audit.stop()
    assert await stored_seqs(engine, "blocked") == [1, 2, 3, 5, 6, 7, 8]
    assert [e.key for e in read_quarantine(blocked)] == [("blocked", 4)]
