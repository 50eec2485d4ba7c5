"""`gateway audit verify`'s journal check on a real database: rows a dead gateway journalled
that the database lacks are named; a running gateway's are only pending; stored ones, and
quarantined ones, are not reported."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.journal import Journal
from gateway.audit.journal_check import unwritten
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from tests.support.audit_events import make_event


async def test_journalled_rows_missing_from_the_database_are_named(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    # Rows stay in memory (and the journal) until stop(), as in the moment before a kill.
    live = AuditWriter(AuditRepository(engine), Spool(tmp_path / "live"), interval_s=3600,
                       batch_size=10_000, journal=Journal(), chain_id="check-chain")
    await live.start()
    for _ in range(3):
        live.record(make_event())

    pending = await unwritten(engine, tmp_path / "live")
    assert [(m.row["seq"], m.live) for m in pending] == [(1, True), (2, True), (3, True)]

    shutil.copytree(tmp_path / "live", tmp_path / "dead")  # no process holds this copy
    lost = await unwritten(engine, tmp_path / "dead")
    assert [(m.row["seq"], m.live) for m in lost] == [(1, False), (2, False), (3, False)]
    assert await unwritten(engine, tmp_path / "dead", quarantined=[("check-chain", 2)]) == [
        m for m in lost if m.row["seq"] != 2]

    await live.stop()  # stores them
    assert await unwritten(engine, tmp_path / "dead") == []
    assert await unwritten(engine, tmp_path / "nowhere") == []
