"""The write-ahead journal: what a killed writer leaves on disk is replayed into the database
exactly once, in chain order, and a journal whose rows are stored is deleted."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gateway.audit.journal import Journal
from gateway.audit.records import Row, event_row
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from tests.support.audit_events import make_event
from tests.unit.audit.test_writer import FAST, FlakySink, assert_one_intact_chain, until


def journalled(sink: FlakySink, spool_dir: Path, **kw: float) -> AuditWriter:
    return AuditWriter(sink, Spool(spool_dir), journal=Journal(fsync_interval_s=0.01),
                       chain_id="test-chain", **{**FAST, **kw})


def journal_files(spool_dir: Path) -> list[Path]:
    return sorted(spool_dir.glob("*/*.journal"))


async def test_rows_only_in_memory_at_a_crash_are_replayed_once_in_order(tmp_path: Path) -> None:
    sink = FlakySink()
    live = journalled(sink, tmp_path / "live", interval_s=3600, batch_size=10_000)
    await live.start()
    for _ in range(100):
        live.record(make_event())
    assert sink.stored == []  # nothing left memory: the batch interval never came
    # The disk as a kill -9 would leave it now (the copy holds no lock: the process is gone).
    shutil.copytree(tmp_path / "live", tmp_path / "crashed")
    assert journal_files(tmp_path / "crashed")

    after = FlakySink()
    after.stored = []
    restarted = journalled(after, tmp_path / "crashed")
    await restarted.start()
    await until(lambda: len(after.stored) == 100)
    await restarted.stop()
    assert_one_intact_chain(after.stored, 100)
    assert journal_files(tmp_path / "crashed") == []
    await live.stop()


async def test_rows_already_stored_before_the_crash_are_not_stored_twice(tmp_path: Path) -> None:
    sink = FlakySink()
    live = journalled(sink, tmp_path / "live")
    await live.start()
    for _ in range(30):
        live.record(make_event())
    await until(lambda: len(sink.stored) == 30)
    sink.down = True  # the next 20 reach only the spool and the journal
    for _ in range(20):
        live.record(make_event())
    await until(lambda: live.numbers()["spool_rows"] == 20)
    for _ in range(5):  # and these only the journal
        live.record(make_event())
    shutil.copytree(tmp_path / "live", tmp_path / "crashed")

    sink.down = False
    restarted = journalled(sink, tmp_path / "crashed")
    await restarted.start()
    await until(lambda: len(sink.stored) == 55)
    await restarted.stop()
    assert_one_intact_chain(sink.stored, 55)
    await live.stop()


async def test_stored_rows_leave_no_journal_behind(tmp_path: Path) -> None:
    sink = FlakySink()
    audit = AuditWriter(sink, Spool(tmp_path), chain_id="test-chain",
                        journal=Journal(fsync_interval_s=0.01, rotate_bytes=2048), **FAST)
    await audit.start()
    for _ in range(200):
        audit.record(make_event())
    await until(lambda: len(sink.stored) == 200)
    await until(lambda: len(journal_files(tmp_path)) <= 1)  # rotated files, once stored
    await audit.stop()
    assert journal_files(tmp_path) == []


async def test_rows_the_database_never_took_stay_journalled_at_shutdown(tmp_path: Path) -> None:
    sink = FlakySink()
    audit = journalled(sink, tmp_path, stop_timeout_s=0.2, interval_s=3600,
                       batch_size=10_000)
    await audit.start()
    for _ in range(10):
        audit.record(make_event())
    # Neither the database nor the spool takes them: the spool's directory is unwritable.
    sink.down = True
    await audit.stop()
    after = FlakySink()
    restarted = journalled(after, tmp_path)
    await restarted.start()
    await until(lambda: len(after.stored) == 10)
    await restarted.stop()
    assert_one_intact_chain(after.stored, 10)


async def test_a_quiet_journal_is_emptied_once_its_rows_are_stored(tmp_path: Path) -> None:
    """Far below the rotation size (a small volume, or little traffic), the file being
    written does not keep rows the database holds already."""
    sink = FlakySink()
    audit = journalled(sink, tmp_path)
    await audit.start()
    for _ in range(50):
        audit.record(make_event())
    await until(lambda: len(sink.stored) == 50)
    await until(lambda: sum(p.stat().st_size for p in journal_files(tmp_path)) == 0)
    assert (audit.disk_free_bytes() or 0) > 0  # the volume readiness reads
    audit.record(make_event())  # and it goes on journalling into the emptied file
    await until(lambda: len(sink.stored) == 51)
    await audit.stop()
    assert_one_intact_chain(sink.stored, 51)


async def test_the_journal_refuses_rows_past_its_bound_until_they_are_stored(
    tmp_path: Path,
) -> None:
    journal = Journal(fsync_interval_s=0.01, max_bytes=8192)
    journal.open(tmp_path)
    audit_rows = []
    try:
        with pytest.raises(OSError, match="at its bound"):
            for seq in range(1, 1000):
                row = journal_row(seq)
                journal.append(row)
                audit_rows.append(row)
        assert 0 < journal.bytes <= 8192
        journal.release(audit_rows[-1]["seq"])  # all stored: room again
        assert journal.bytes == 0
        journal.append(journal_row(len(audit_rows) + 1))
    finally:
        await journal.close(all_stored=True)


def journal_row(seq: int) -> Row:
    return {**event_row(make_event()), "chain_id": "test-chain", "seq": seq, "prev_hash": "0",
            "row_hash": "0"}
