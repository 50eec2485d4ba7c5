"""The audit spool: append-only files of chained rows, kept while the database is unreachable
and replayed into it, oldest first, when it returns.

A spool is a directory of segments (`000000000001.jsonl`, ...), one JSON line per row. Each
append writes a whole batch and fsyncs it before returning, so a row the writer has counted
as spooled is on disk. Replay reads the oldest segment, and the caller deletes it only after
the database has committed its rows: no segment is ever rewritten in place.

Several processes may share one spool directory (`gateway serve --workers N`): each claims a
numbered slot below it with an exclusive `flock`, which the kernel releases if the process
dies, so a restarted process takes over its predecessor's slot and replays what it left; it
also adopts the segments of any other slot no live process holds (fewer workers than before).

A process that died also leaves its write-ahead journal files (`*.journal`, journal.py) in
its slot: whoever claims or adopts the slot renames them into segments after the slot's own,
so they are replayed like any other (rows already in the database are not inserted twice).

A torn last line (the process died in the middle of an append) is skipped with a warning.
It can only hold rows of the batch being written at that moment, which the writer had not yet
counted as spooled: the same rows a crash loses from the in-memory queue, written off the
request path by design. No row of an append that returned can be torn: every append starts
at the end of the previous complete one, and a failed append is cut off again (or, if even
that fails, its segment is closed and the next append starts a new one).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import orjson

from gateway.audit.records import CONTENT, Row, from_wire, row_hash, to_wire

log = logging.getLogger("gateway.audit")

SEGMENT_BYTES = 16 * 1024 * 1024  # replay holds one segment in memory at a time
MAX_SLOTS = 256
SUFFIX = ".jsonl"
JOURNAL_SUFFIX = ".journal"


@dataclass(slots=True)
class Segment:
    path: Path
    rows: int
    size: int  # bytes of whole lines; a failed append is cut back to this


class Spool:
    def __init__(self, root: Path, *, segment_bytes: int = SEGMENT_BYTES) -> None:
        self._root = root
        self._segment_bytes = segment_bytes
        self._segments: deque[Segment] = deque()
        self._fd: int | None = None  # the segment being appended to: always the newest
        self._lock_fd: int | None = None
        self._next = 1
        self.directory: Path | None = None

    async def open(self) -> None:
        """Claim a slot and find what an earlier process left in it."""
        await asyncio.to_thread(self._open_blocking)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self._segments)

    @property
    def size(self) -> int:
        return sum(s.size for s in self._segments)

    @property
    def pending(self) -> bool:
        return bool(self._segments)

    @property
    def root(self) -> Path:
        """The directory every worker's slot is under (the quarantine file lives here too)."""
        return self._root

    async def append(self, rows: list[Row]) -> None:
        """Write and fsync one batch; raises OSError with nothing half-counted."""
        data = b"".join(to_wire(row) + b"\n" for row in rows)
        await asyncio.to_thread(self._append_blocking, data, len(rows))

    async def oldest(self) -> tuple[Segment, list[Row]] | None:
        """The oldest segment and its rows. The newest is closed first, so rows appended
        while it is being replayed go to a segment of their own."""
        if not self._segments:
            return None
        segment = self._segments[0]
        if len(self._segments) == 1 and self._fd is not None:
            self._close_segment()
        return segment, await asyncio.to_thread(read_segment, segment.path)

    async def remove(self, segment: Segment) -> None:
        """Drop a replayed segment (only after the database has committed its rows)."""
        await asyncio.to_thread(segment.path.unlink, missing_ok=True)
        self._segments.remove(segment)

    def close(self) -> None:
        self._close_segment()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the slot
            self._lock_fd = None

    def _open_blocking(self) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        for slot in range(MAX_SLOTS):
            directory = self._root / str(slot)
            directory.mkdir(exist_ok=True)
            fd = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._lock_fd, self.directory = fd, directory
            break
        else:
            raise OSError(f"all {MAX_SLOTS} audit spool slots in {self._root} are taken")
        own = sorted(directory.glob(f"*{SUFFIX}"))
        self._next = max((int(p.stem) + 1 for p in own), default=1)
        self._take(sorted(directory.glob(f"*{JOURNAL_SUFFIX}")))  # a dead predecessor's
        self._adopt_orphans()
        for path in sorted(directory.glob(f"*{SUFFIX}")):
            data = path.read_bytes()
            self._segments.append(Segment(path, data.count(b"\n"), len(data)))
        if self._segments:
            log.warning("audit spool %s holds %d rows from an earlier run; replaying them",
                        directory, self.rows)

    def _adopt_orphans(self) -> None:
        """Move segments from slots no live process holds (the gateway was restarted with
        fewer workers) into this one, oldest first, to be replayed with its own."""
        assert self.directory is not None
        for other in self._root.iterdir():
            if other == self.directory or not _leftovers(other):
                continue
            fd = os.open(other / "lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue  # a live process's slot
            try:
                self._take(_leftovers(other))
            finally:
                os.close(fd)

    def _take(self, paths: list[Path]) -> None:
        """Make these files the next segments of this slot, in the order given."""
        if not paths:
            return
        assert self.directory is not None
        for path in paths:
            os.rename(path, self.directory / f"{self._next:012d}{SUFFIX}")
            self._next += 1
        _fsync_dir(self.directory)

    def _append_blocking(self, data: bytes, count: int) -> None:
        if self._fd is None or self._segments[-1].size >= self._segment_bytes:
            self._start_segment()
        assert self._fd is not None
        segment = self._segments[-1]
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError:
            self._cut_back(segment)
            raise
        segment.rows += count
        segment.size += len(data)

    def _cut_back(self, segment: Segment) -> None:
        """Remove a failed append's partial lines, so every segment is whole lines."""
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, segment.size)
            os.lseek(self._fd, segment.size, os.SEEK_SET)
        except OSError:
            log.exception("audit spool: cannot cut back %s; starting a new segment",
                          segment.path)
            self._close_segment()

    def _start_segment(self) -> None:
        assert self.directory is not None
        self._close_segment()
        path = self.directory / f"{self._next:012d}{SUFFIX}"
        self._next += 1
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._segments.append(Segment(path, 0, 0))
        _fsync_dir(self.directory)  # the new name must survive a crash, not only its bytes

    def _close_segment(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _leftovers(slot: Path) -> list[Path]:
    """A slot's spool segments, then its journal files: oldest rows first."""
    if not slot.is_dir():
        return []
    return [*sorted(slot.glob(f"*{SUFFIX}")), *sorted(slot.glob(f"*{JOURNAL_SUFFIX}"))]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_segment(path: Path) -> list[Row]:
    """A segment's rows in order; a torn last line is skipped (see the module docstring)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    tail = lines.pop()  # empty when the file ends with a whole line
    if tail:
        log.warning("audit spool %s: skipping a torn last line (%d bytes) left by a crash",
                    path, len(tail))
    rows: list[Row] = []
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            row = from_wire(line)
        except orjson.JSONDecodeError:
            row = None
        if not _whole(row):
            # Not a torn tail: the file was damaged after it was written. Say so loudly.
            log.error("audit spool %s: line %d is unreadable and was skipped: %r",
                      path, number, line[:200])
            continue
        rows.append(row)
    return rows


def _whole(row: object) -> TypeGuard[Row]:
    """The row as it was written. A damaged row that still parses (a flipped byte in a key or a
    value) would otherwise fail its insert on every replay and stall the spool for good; its
    own hash shows any change to the logged fields, and its content (outside the hash) must
    still have the shape audit_content takes."""
    if not isinstance(row, dict) or row.get("row_hash") != row_hash(row):
        return False
    content = row.get(CONTENT, {"prompt": "", "response": ""})
    return (isinstance(content, dict) and content.keys() == {"prompt", "response"}
            and all(isinstance(v, str) for v in content.values()))
