"""The audit writer against a database stand-in that fails, hangs and recovers (the sink is
the seam), with a real spool on disk: every row arrives once, in chain order."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.audit.records import GENESIS, Row, row_hash
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from tests.support.audit_events import make_event

FAST = {"interval_s": 0.01, "retry_min_s": 0.01, "retry_max_s": 0.05}


class FlakySink:
    """Stores rows like the repository (idempotent by chain position), unless told not to."""

    def __init__(self) -> None:
        self.stored: list[Row] = []  # in commit order
        self._seen: set[tuple[str, int]] = set()
        self.down = False
        self.hang = False
        self.calls = 0

    async def insert(self, rows: list[Row]) -> int:
        self.calls += 1
        if self.hang:
            await asyncio.sleep(3600)
        if self.down:
            raise ConnectionRefusedError("database is down")
        new = [r for r in rows if (r["chain_id"], r["seq"]) not in self._seen]
        self._seen.update((r["chain_id"], r["seq"]) for r in new)
        self.stored += new
        return len(new)


def assert_one_intact_chain(rows: list[Row], count: int) -> None:
    assert [r["seq"] for r in rows] == list(range(1, count + 1))  # once each, in order
    head = GENESIS
    for row in rows:
        assert row["prev_hash"] == head
        assert row_hash(row) == row["row_hash"]
        head = row["row_hash"]


async def until(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def writer(sink: FlakySink, spool_dir: Path, **kw: float) -> AuditWriter:
    return AuditWriter(sink, Spool(spool_dir), chain_id="test-chain", **{**FAST, **kw})


async def test_rows_spooled_during_an_outage_arrive_in_order_when_it_ends(tmp_path: Path) -> None:
    sink = FlakySink()
    audit = writer(sink, tmp_path)
    await audit.start()
    for _ in range(50):
        audit.record(make_event())
    await until(lambda: len(sink.stored) == 50)
    sink.down = True
    for _ in range(30):  # several batches while the database is away
        for _ in range(20):
            audit.record(make_event())
        await asyncio.sleep(0.005)
    await until(lambda: audit.numbers()["spool_rows"] == 600)
    assert audit.problem is None  # spooled rows are safe: no alarm
    assert audit.stats.write_failures >= 1
    sink.down = False
    for _ in range(100):  # recorded while the spool is replayed: they must wait their turn
        audit.record(make_event())
    await until(lambda: len(sink.stored) == 750)
    await audit.stop()
    assert_one_intact_chain(sink.stored, 750)
    assert audit.numbers()["spool_rows"] == 0
    assert list((tmp_path / "0").glob("*.jsonl")) == []


async def test_a_hung_database_diverts_rows_to_the_spool(tmp_path: Path) -> None:
    sink = FlakySink()
    sink.hang = True
    audit = writer(sink, tmp_path, insert_timeout_s=0.1)
    await audit.start()
    for _ in range(10):
        audit.record(make_event())
    await until(lambda: audit.numbers()["spool_rows"] == 10)
    sink.hang = False
    await until(lambda: len(sink.stored) == 10)
    await audit.stop()
    assert_one_intact_chain(sink.stored, 10)


async def test_when_the_spool_fails_too_rows_wait_in_memory_and_the_alarm_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_disk(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    sink = FlakySink()
    sink.down = True
    audit = writer(sink, tmp_path)
    await audit.start()
    monkeypatch.setattr(os, "fsync", broken_disk)
    with caplog.at_level(logging.ERROR, "gateway.audit"):
        for _ in range(40):
            audit.record(make_event())
        await until(lambda: audit.stats.spool_errors >= 2)
    assert audit.problem is not None and "spool failed" in audit.problem
    assert audit.numbers()["alarm"] == 1
    assert audit.backlog == 40 and audit.numbers()["spool_rows"] == 0
    assert "audit spool failed" in caplog.text
    monkeypatch.undo()  # the disk is back, the database still down: rows reach the spool
    await until(lambda: audit.numbers()["spool_rows"] == 40)
    assert audit.problem is None
    sink.down = False
    await until(lambda: len(sink.stored) == 40)
    await audit.stop()
    assert_one_intact_chain(sink.stored, 40)
    assert audit.stats.dropped == 0


async def test_stop_drains_to_the_spool_and_the_next_start_replays_it(tmp_path: Path) -> None:
    sink = FlakySink()
    sink.down = True
    first = writer(sink, tmp_path, interval_s=60)  # nothing drains before stop()
    await first.start()
    for _ in range(1200):
        first.record(make_event())
    await first.stop()
    assert first.backlog == 0 and first.numbers()["spool_rows"] == 1200
    assert sink.stored == []

    sink.down = False
    second = AuditWriter(sink, Spool(tmp_path), chain_id="next-life", **FAST)
    await second.start()
    second.record(make_event())
    await until(lambda: len(sink.stored) == 1201)
    await second.stop()
    old = [r for r in sink.stored if r["chain_id"] == "test-chain"]
    assert_one_intact_chain(old, 1200)
    assert sink.stored[:1200] == old  # the earlier life's rows went in first


async def test_stop_writes_everything_to_a_working_database(tmp_path: Path) -> None:
    sink = FlakySink()
    audit = writer(sink, tmp_path, interval_s=60)
    await audit.start()
    for _ in range(1234):
        audit.record(make_event())
    await audit.stop()
    assert_one_intact_chain(sink.stored, 1234)
    assert audit.stats.rows_written == 1234 and audit.stats.rows_spooled == 0


async def test_events_beyond_the_memory_cap_are_counted_and_logged_in_full(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = FlakySink()
    audit = writer(sink, tmp_path, interval_s=60, memory_cap=5)  # a cap small enough to reach
    await audit.start()
    with caplog.at_level(logging.ERROR, "gateway.audit"):
        for i in range(7):
            audit.record(make_event(request_id=f"capped-{i}"))
    assert audit.stats.dropped == 2
    assert '"request_id":"capped-6"' in caplog.text
    assert audit.problem is not None
    await audit.stop()
    assert len(sink.stored) == 5
