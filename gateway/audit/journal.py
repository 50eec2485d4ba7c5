"""The audit write-ahead journal: every audit row is appended to a local file with one
write(2) before its response completes, so an answered request keeps its row through a
process kill.

The journal lives in the writer's spool slot (spool.py; the slot's flock makes it this
process's alone), as numbered `*.journal` files of whole JSON lines in the spool's own row
format. Once the kernel has accepted a write, a killed process (SIGKILL, the OOM killer)
cannot lose it; a power loss or kernel crash can lose what was not yet on the disk, which is
at most the last `fsync_interval_s` of rows: a background task fdatasyncs the file that often
(in a thread, never on the event loop).

A file is rotated at `rotate_bytes` and deleted once every row in it has been stored in the
database or the spool (`release`); the file being written is emptied (truncated) as soon as
every row in it is stored, so a small volume is never filled with rows the database already
holds. At `max_bytes` in all (rows not yet stored: the database and the spool both behind)
an append is refused with OSError: the writer then holds that row in memory only until it is
stored, counts it as a journal error and reports the alarm (readiness fails) meanwhile.

A process that starts finds the journal files a dead one left and hands them to the spool as
segments (spool.py), which replays them in order into the database; inserts are idempotent,
so rows that had already been stored are not stored twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from gateway.audit.records import Row, to_wire

log = logging.getLogger("gateway.audit")

SUFFIX = ".journal"
ROTATE_BYTES = 1024 * 1024  # a crash leaves at most about this much to re-insert
MAX_BYTES = 64 * 1024 * 1024  # rows not yet stored anywhere else: beyond, not journalled
FSYNC_INTERVAL_S = 0.1


@dataclass(slots=True)
class _File:
    path: Path
    fd: int | None
    last_seq: int = 0  # of the newest row in it
    size: int = 0  # bytes, once rotated


class Journal:
    def __init__(self, *, fsync_interval_s: float = FSYNC_INTERVAL_S,
                 rotate_bytes: int = ROTATE_BYTES, max_bytes: int = MAX_BYTES) -> None:
        self._fsync_interval_s = fsync_interval_s
        self._rotate_bytes = min(rotate_bytes, max_bytes)
        self._max_bytes = max_bytes
        self._directory: Path | None = None
        self._current: _File | None = None
        self._size = 0
        self._next = 1
        self._rotated: list[_File] = []  # older files, kept until their rows are stored
        self._stored_seq = 0  # every row up to this one is stored elsewhere
        self._dirty = False  # the current file has writes not yet fdatasynced
        self._new_name = False  # a file was created since the directory was last fsynced
        self._syncer: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self.appends = 0
        self.errors = 0  # failed fsyncs
        self.problem: str | None = None  # set while fsyncs fail (readiness reports it)

    @property
    def files(self) -> int:
        return len(self._rotated) + (self._current is not None)

    @property
    def bytes(self) -> int:
        return self._size + sum(f.size for f in self._rotated)

    def open(self, directory: Path) -> None:
        """Start journalling into this (claimed, already replayed-from) spool slot."""
        self._directory = directory
        existing = [int(p.stem) for p in directory.glob(f"*{SUFFIX}") if p.stem.isdigit()]
        self._next = max(existing, default=0) + 1
        self._syncer = asyncio.create_task(self._sync_loop(), name="audit-journal-sync")

    def append(self, row: Row) -> None:
        """One write(2) of one whole line; raises OSError (nothing counted) if it fails."""
        data = to_wire(row) + b"\n"
        if self.bytes + len(data) > self._max_bytes:
            raise OSError(f"audit journal at its bound ({self._max_bytes} bytes of rows not "
                          "yet stored)")
        if self._current is None or self._size >= self._rotate_bytes:
            self._rotate()
        current = self._current
        assert current is not None and current.fd is not None
        written = os.write(current.fd, data)
        if written != len(data):  # only on a full disk: cut the partial line off again
            self._cut_back()
            raise OSError(f"audit journal: short write ({written} of {len(data)} bytes)")
        self._size += written
        current.last_seq = row["seq"]
        self._dirty = True
        self.appends += 1

    def release(self, stored_seq: int) -> None:
        """Every row up to `stored_seq` is in the database or the spool: delete the rotated
        files that hold nothing newer (they are closed only after their last fsync)."""
        self._stored_seq = max(self._stored_seq, stored_seq)
        keep = []
        for old in self._rotated:
            if old.last_seq <= self._stored_seq and old.fd is None:
                with contextlib.suppress(FileNotFoundError):
                    old.path.unlink()
            else:
                keep.append(old)
        self._rotated = keep
        current = self._current
        if (current is not None and current.fd is not None and self._size
                and current.last_seq <= self._stored_seq):
            # Everything in it is stored: empty it now rather than at its rotation, which a
            # quiet gateway (or a small volume) may never reach. O_APPEND writes go on at 0.
            try:
                os.ftruncate(current.fd, 0)
                self._size = 0
            except OSError:
                log.exception("audit journal: cannot empty %s", current.path)

    async def close(self, *, all_stored: bool) -> None:
        """Sync and close; the files are deleted if every row in them was stored, and kept
        for the next start to replay otherwise."""
        if self._syncer is not None:
            # Not cancelled: a thread may be fsyncing a descriptor that _finish closes.
            self._stopping.set()
            await self._syncer
            self._syncer = None
        files = [*self._rotated, *([self._current] if self._current else [])]
        self._rotated, self._current = [], None
        await asyncio.to_thread(_finish, files, all_stored)

    def _rotate(self) -> None:
        if self._directory is None:  # a failure of the journal, never of the request
            raise OSError("the audit journal is not open")
        if self._current is not None:
            self._current.size = self._size
            self._rotated.append(self._current)  # the syncer fsyncs and closes it
        path = self._directory / f"{self._next:012d}{SUFFIX}"
        self._next += 1
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._current, self._size = _File(path, fd), 0
        self._new_name = True

    def _cut_back(self) -> None:
        assert self._current is not None and self._current.fd is not None
        try:
            os.ftruncate(self._current.fd, self._size)
        except OSError:
            log.exception("audit journal: cannot cut back %s; starting a new file",
                          self._current.path)
            self._size = self._rotate_bytes  # the next append rotates

    async def _sync_loop(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self._fsync_interval_s)
            try:
                await self.sync()
                self.problem = None
            except OSError as exc:
                self.errors += 1
                self.problem = f"audit journal fsync failed: {exc}"
                log.error("audit journal: fsync failed (%s); rows of the last %.2f s may not "
                          "survive a power loss", exc, self._fsync_interval_s)

    async def sync(self) -> None:
        """fdatasync what was written (in a thread), then close rotated files."""
        retiring = [f for f in self._rotated if f.fd is not None]
        fds = [f.fd for f in retiring if f.fd is not None]
        if self._dirty and self._current is not None and self._current.fd is not None:
            fds.append(self._current.fd)
            self._dirty = False
        new_name, self._new_name = self._new_name, False
        if fds or new_name:
            assert self._directory is not None
            await asyncio.to_thread(_sync, fds, self._directory if new_name else None)
        for old in retiring:  # closed here, on the loop, after no thread uses them any more
            assert old.fd is not None
            os.close(old.fd)
            old.fd = None
        if retiring:
            self.release(self._stored_seq)


def _sync(fds: list[int], directory: Path | None) -> None:
    for fd in fds:
        os.fdatasync(fd)
    if directory is not None:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _finish(files: list[_File], delete: bool) -> None:
    for file in files:
        if file.fd is not None:
            os.fdatasync(file.fd)
            os.close(file.fd)
            file.fd = None
        if delete:
            with contextlib.suppress(FileNotFoundError):
                file.path.unlink()
