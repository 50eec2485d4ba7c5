"""The audit spool on a real directory: append, replay in order, torn tails, segments."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

import pytest

from gateway.audit.records import Chain, event_row, to_wire
from gateway.audit.spool import Spool, read_segment
from tests.support.audit_events import make_event


def rows(chain: Chain, n: int) -> list[dict[str, object]]:
    return [chain.link(event_row(make_event())) for _ in range(n)]


async def replay_all(spool: Spool) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    while (found := await spool.oldest()) is not None:
        segment, got = found
        out += got
        await spool.remove(segment)
    return out


async def test_appended_batches_come_back_in_order_and_removed_segments_are_gone(
    tmp_path: Path,
) -> None:
    chain = Chain("c")
    spool = Spool(tmp_path, segment_bytes=4096)  # a few rows per segment
    await spool.open()
    written = [row for _ in range(10) for row in await _append(spool, rows(chain, 3))]
    assert spool.rows == 30 and spool.size > 4096
    assert spool.directory is not None
    assert len(list(spool.directory.glob("*.jsonl"))) > 2  # segmented
    assert await replay_all(spool) == written
    assert not spool.pending and spool.rows == 0
    assert list(spool.directory.glob("*.jsonl")) == []
    spool.close()


async def _append(spool: Spool, batch: list[dict[str, object]]) -> list[dict[str, object]]:
    await spool.append(batch)
    return batch


async def test_appends_during_replay_go_to_a_new_segment(tmp_path: Path) -> None:
    chain = Chain("c")
    spool = Spool(tmp_path)
    await spool.open()
    first = rows(chain, 5)
    await spool.append(first)
    found = await spool.oldest()
    assert found is not None and found[1] == first
    later = rows(chain, 2)
    await spool.append(later)  # while the first segment is being replayed
    await spool.remove(found[0])
    assert await replay_all(spool) == later
    spool.close()


async def test_a_spool_left_by_an_earlier_process_is_found_with_its_torn_tail_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chain = Chain("c")
    crashed = Spool(tmp_path)
    await crashed.open()
    kept = rows(chain, 4)
    await crashed.append(kept)
    assert crashed.directory is not None
    [segment] = crashed.directory.glob("*.jsonl")
    with segment.open("ab") as f:  # the process died half-way through its next append
        f.write(b'{"chain_id": "c", "seq": 5, "ts": 17')
    crashed.close()

    restarted = Spool(tmp_path)
    await restarted.open()
    assert restarted.directory == crashed.directory  # the slot was free again
    assert restarted.pending
    with caplog.at_level(logging.WARNING, "gateway.audit"):
        assert await replay_all(restarted) == kept
    assert "torn last line" in caplog.text
    # New segments are numbered after the old ones: replay order is file order.
    await restarted.append(rows(chain, 1))
    assert [p.name for p in restarted.directory.glob("*.jsonl")] == ["000000000002.jsonl"]
    restarted.close()


async def test_two_live_spools_on_one_directory_take_separate_slots(tmp_path: Path) -> None:
    a, b = Spool(tmp_path), Spool(tmp_path)
    await a.open()
    await b.open()
    assert a.directory is not None and b.directory is not None
    assert a.directory != b.directory
    a.close()
    b.close()


def test_a_damaged_line_in_the_middle_is_skipped_loudly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "000000000001.jsonl"
    first, third = rows(Chain("c"), 2)
    path.write_bytes(to_wire(first) + b"\nnot json\n" + to_wire(third) + b"\n")
    with caplog.at_level(logging.ERROR, "gateway.audit"):
        assert read_segment(path) == [first, third]
    assert "line 2 is unreadable" in caplog.text


async def test_a_failed_append_is_cut_back_to_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain("c")
    spool = Spool(tmp_path)
    await spool.open()
    good = rows(chain, 2)
    await spool.append(good)
    real_write = os.write

    def disk_full(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))  # half a batch reaches the file
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", disk_full)
    failed = rows(chain, 3)
    with pytest.raises(OSError):
        await spool.append(failed)
    monkeypatch.setattr(os, "write", real_write)
    assert spool.rows == 2
    await spool.append(failed)  # the writer retries the same rows
    assert spool.directory is not None
    [segment] = spool.directory.glob("*.jsonl")
    assert segment.read_bytes().count(b"\n") == 5
    assert await replay_all(spool) == good + failed
    spool.close()


async def test_segments_of_a_slot_nobody_holds_are_adopted_but_a_live_slot_is_not(
    tmp_path: Path,
) -> None:
    chain, other = Chain("live"), Chain("gone")
    live, idle, gone = Spool(tmp_path), Spool(tmp_path), Spool(tmp_path)
    for spool in (live, idle, gone):
        await spool.open()
    await live.append(rows(chain, 2))
    left_behind = rows(other, 3)
    await gone.append(left_behind)
    gone.close()  # e.g. the gateway came back with fewer workers
    idle.close()
    successor = Spool(tmp_path)
    await successor.open()
    assert successor.directory == idle.directory  # the first free slot
    assert await replay_all(successor) == left_behind
    assert live.rows == 2 and live.directory is not None
    assert len(list(live.directory.glob("*.jsonl"))) == 1
    live.close()
    successor.close()
