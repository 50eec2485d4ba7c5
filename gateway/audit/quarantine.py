"""Audit rows the database refused for their data, and the file that keeps them.

`refused()` tells such a refusal (a value the column will not take, a broken constraint) from
the database being unavailable: a refused row fails the same way on every retry, so the writer
moves it here rather than letting it hold the spool's head, and every row behind it, for ever.

The quarantine is one JSON-lines file beside the spool, shared by every process of a gateway:
each entry is a row as it was hashed, with the database's error, appended under an exclusive
`flock` and fsynced. Nothing is ever rewritten: `gateway audit quarantine --retry` appends a
`stored` entry for each row it then got into the database.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from sqlalchemy import exc as sa_exc

from gateway.audit.records import Row, row_hash

log = logging.getLogger("gateway.audit")

FILE_NAME = "quarantine.jsonl"
# SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation).
REFUSING_SQLSTATES = ("22", "23")


def quarantine_path(spool_root: Path) -> Path:
    return spool_root / FILE_NAME


def refused(exc: BaseException) -> bool:
    """True when the database (or its driver, encoding the values) refused the rows' data;
    False for everything that may pass if tried again later: connection errors, timeouts,
    a locked or full database, a missing table. (A row already stored is no refusal: the
    repository's inserts skip it with ON CONFLICT DO NOTHING.)"""
    links = list(_causes(exc))
    if any(isinstance(link, OSError | TimeoutError | asyncio.CancelledError) for link in links):
        return False
    for link in links:
        sqlstate = getattr(link, "sqlstate", None)
        if isinstance(sqlstate, str) and sqlstate.startswith(REFUSING_SQLSTATES):
            return True
        # asyncpg's own DataError: a parameter it could not encode (an int out of range).
        if isinstance(link, asyncpg.exceptions.DataError | sa_exc.DataError
                      | sa_exc.IntegrityError):
            return True
        # Raised by our code or the driver before anything was sent (a value that cannot
        # be converted): unlike a failure of the database, it repeats on every attempt.
        if isinstance(link, ValueError | TypeError | OverflowError):
            return True
    return False


def refusal_message(exc: BaseException, limit: int = 500) -> str:
    """The database's own words, with its SQLSTATE: not SQLAlchemy's rendering, which
    repeats the statement and every parameter of the batch."""
    inner = getattr(exc, "orig", None) or exc
    sqlstate = getattr(inner, "sqlstate", None)
    message = " ".join(str(inner).split())
    code = f" [SQLSTATE {sqlstate}]" if sqlstate else ""
    return f"{type(inner).__name__}{code}: {message}"[:limit]


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The error and what it wraps (a DBAPI error's `orig`, `raise … from`); not __context__,
    which may hold anything a library handled on the way."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        link = todo.pop()
        if link is None or id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        todo += [getattr(link, "orig", None), link.__cause__]


@dataclass(frozen=True, slots=True)
class Entry:
    """One quarantined row, still waiting (`stored` False) or since stored by a retry."""

    row: Row
    error: str
    at_unix_s: float
    stored: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return self.row["chain_id"], self.row["seq"]

    @property
    def intact(self) -> bool:
        """The row is the one its chain hashed (what verify may accept in a gap)."""
        return row_hash(self.row) == self.row.get("row_hash")


class QuarantineFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    async def add(self, row: Row, error: str) -> None:
        """Append one refused row and fsync it; raises OSError if it is not on disk."""
        line = {"quarantined_at": time.time(), "error": error, "row": row}
        await asyncio.to_thread(self._append, orjson.dumps(line, default=str) + b"\n")

    async def mark_stored(self, keys: list[tuple[str, int]]) -> None:
        data = b"".join(
            orjson.dumps({"stored_at": time.time(), "chain_id": c, "seq": s}) + b"\n"
            for c, s in keys
        )
        await asyncio.to_thread(self._append, data)

    def _append(self, data: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # whole entries, whichever worker writes
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)  # releases the lock


# Inserts rows in one transaction: None when committed, else what went wrong.
Attempt = Callable[[list[Row]], Awaitable[Exception | None]]


class Quarantine:
    """The writer's side: sorts a refused batch and keeps its refused rows, and says so.

    A quarantined row is safe on disk but needs an operator, so `problem` (the writer's
    alarm, readiness) names the file for `alarm_s` after the latest one: long enough for
    probes and alerts to see, without taking the gateway out of rotation until a restart."""

    def __init__(self, file: QuarantineFile, *, alarm_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.file = file
        self.rows = 0  # quarantined by this process
        self._alarm_s = alarm_s
        self._clock = clock
        self._note: str | None = None
        self._until = 0.0

    @property
    def problem(self) -> str | None:
        return self._note if self._clock() < self._until else None

    async def settle(self, rows: list[Row], failure: Exception, attempt: Attempt,
                     may_try: Callable[[], bool]) -> Exception | None:
        """After `attempt(rows)` failed with `failure`: None once every row is stored or
        quarantined; otherwise what stops it (the database is unavailable, or the quarantine
        file failed), and the caller keeps all the rows to try again (stored ones are then
        skipped by the idempotent insert)."""
        if not refused(failure):
            return failure
        try:
            return await self._sift(rows, failure, attempt, may_try)
        except OSError as exc:
            self._raise(f"audit quarantine file {self.file.path} failed: {exc}; refused rows "
                        "wait in the spool")
            log.error("audit quarantine file %s failed (%s); the refused rows are kept and "
                      "tried again", self.file.path, exc)
            return exc

    async def _sift(self, rows: list[Row], failure: Exception, attempt: Attempt,
                    may_try: Callable[[], bool]) -> Exception | None:
        """Halve until each refused row stands alone: about 2·log2(n) inserts per row."""
        if len(rows) == 1:
            await self._keep(rows[0], failure)
            return None
        middle = len(rows) // 2
        for half in (rows[:middle], rows[middle:]):
            if not may_try():
                return TimeoutError("no time left to sort a refused batch")
            found = await attempt(half)
            if found is not None:
                if not refused(found):
                    return found
                stopped = await self._sift(half, found, attempt, may_try)
                if stopped is not None:
                    return stopped
        return None

    async def _keep(self, row: Row, failure: Exception) -> None:
        error = refusal_message(failure)
        await self.file.add(row, error)
        self.rows += 1
        self._raise(f"{self.rows} audit rows refused by the database were quarantined in "
                    f"{self.file.path} (see `gateway audit quarantine`)")
        log.error("audit row of request %s (chain %s seq %s) refused by the database and "
                  "quarantined in %s: %s", row.get("request_id"), row.get("chain_id"),
                  row.get("seq"), self.file.path, error)

    def _raise(self, note: str) -> None:
        self._note, self._until = note, self._clock() + self._alarm_s


def read_quarantine(path: Path) -> list[Entry]:
    """Every quarantined row once (the latest entry for a chain position), in file order;
    a damaged line is skipped (it was never acknowledged as written)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    found: dict[tuple[str, int], Entry] = {}
    for line in data.splitlines():
        try:
            item: Any = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(item, dict):
            continue
        if "row" in item and isinstance(item["row"], dict):
            entry = Entry(item["row"], str(item.get("error", "")),
                          float(item.get("quarantined_at", 0.0)))
            if "chain_id" in entry.row and "seq" in entry.row:
                found.pop(entry.key, None)
                found[entry.key] = entry
        elif "stored_at" in item:
            chain_id, seq = item.get("chain_id"), item.get("seq")
            old = found.get((chain_id, seq)) if isinstance(chain_id, str) else None
            if old is not None:
                found[old.key] = Entry(old.row, old.error, old.at_unix_s, stored=True)
    return list(found.values())
