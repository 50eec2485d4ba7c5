"""Batched audit writing that never drops a row silently, durable before a response ends.

`record()` turns the event into a row, links it into this process's hash chain (one chain id
per writer life), appends it to the write-ahead journal with one write(2) (journal.py) and
queues it in memory: no await, no fsync. One background task drains the queue every
`interval_s`, or sooner once `batch_size` rows wait, and stores each batch in one transaction
through the `AuditSink` (the repository; inserts are idempotent).

When the database fails, or does not answer within `insert_timeout_s`, the batch goes to the
spool (append-only files, fsynced per batch) instead, and so does every later batch until
the spool has been replayed completely, so a chain's rows reach the database in order.
Replay retries the database with backoff (`retry_min_s` doubling to `retry_max_s`) and
deletes a spool segment only after its rows are committed. A spool left by an earlier
process (a crash) is replayed after start.

A batch the database refuses for its data would fail the same way for ever: its good rows
are stored and each refused one moved to the quarantine file beside the spool, with the alarm
raised (quarantine.py). Replay does the same, so the spool's head always drains.

If the spool fails too, the rows stay in memory and are retried; the writer raises its alarm
(`problem`: /ready answers 503, gateway_audit_spool_errors_total, an ERROR log). Events
beyond `memory_cap` are refused, each counted and logged in full at ERROR. stop() drains
everything within `stop_timeout_s`: to the database if it answers, else to the spool.

A killed process (kill -9, the OOM killer) loses nothing: the next start replays its journal
(through the spool). A power loss can cost the rows journalled in the last
`GATEWAY_AUDIT_JOURNAL_FSYNC_S` (0.1 s by default) that the disk had not yet been told to keep.
Without a journal (tests, embedded use), a crash loses the rows of the last `interval_s`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import orjson

from gateway.audit.journal import Journal
from gateway.audit.mirror import JsonLinesMirror
from gateway.audit.quarantine import Quarantine, QuarantineFile, quarantine_path
from gateway.audit.recent import RecentRequests
from gateway.audit.records import Chain, Row, event_row, new_chain_id
from gateway.audit.spool import Spool
from gateway.types import AuditEvent

log = logging.getLogger("gateway.audit")


class AuditSink(Protocol):
    async def insert(self, rows: list[Row]) -> int:
        """Store chained rows in one transaction, idempotently; returns how many were new."""
        ...


@dataclasses.dataclass(slots=True)
class AuditStats:
    rows_written: int = 0  # new rows committed to the database (replayed ones included)
    rows_spooled: int = 0
    write_failures: int = 0  # database inserts that failed or timed out
    spool_errors: int = 0  # spool appends or reads that failed
    dropped: int = 0  # events refused or given up, each logged in full at ERROR
    journal_errors: int = 0  # journal appends that failed (the row was only in memory)


class AuditWriter:
    def __init__(
        self,
        sink: AuditSink,
        spool: Spool,
        *,
        mirror: JsonLinesMirror | None = None,
        journal: Journal | None = None,
        quarantine: Quarantine | None = None,
        batch_size: int = 500,
        interval_s: float = 0.2,
        insert_timeout_s: float = 5.0,
        retry_min_s: float = 0.5,
        retry_max_s: float = 5.0,
        stop_timeout_s: float = 15.0,
        memory_cap: int = 1_000_000,
        chain_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        observer: Callable[[list[AuditEvent]], None] | None = None,
    ) -> None:
        self._sink = sink
        self._spool = spool
        self._mirror = mirror
        self._journal = journal
        self._quarantine = quarantine or Quarantine(QuarantineFile(quarantine_path(spool.root)))
        self._batch_size = batch_size
        self._interval_s = interval_s
        self._insert_timeout_s = insert_timeout_s
        self._retry_min_s = retry_min_s
        self._retry_max_s = retry_max_s
        self._stop_timeout_s = stop_timeout_s
        self._memory_cap = memory_cap
        self._clock = clock
        self._observer = observer  # sees each batch once (request metrics), off the hot path
        self._chain = Chain(chain_id or new_chain_id())
        self._queue: deque[tuple[AuditEvent, Row]] = deque()
        self._held: list[Row] = []  # linked rows stored nowhere yet (at most one batch)
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._retry_at = 0.0  # the database is not tried again before this (monotonic)
        self._backoff_s = retry_min_s
        self._resume: tuple[str, int] | None = None  # (segment, rows done) of a cut replay
        self._alarm: str | None = None
        self.stats = AuditStats()
        self.recent = RecentRequests()  # ids whose rows may not be in the database yet

    def record(self, event: AuditEvent) -> None:
        """Journal the event's row (durable through a process kill once this returns) and
        queue it for the database. Called before the response's last byte is sent."""
        if len(self._queue) >= self._memory_cap:
            self._give_up([event], f"audit queue full ({self._memory_cap} events)")
            return
        try:
            row = event_row(event)
        except Exception:  # one malformed event must not fail its request or its batch
            log.exception("audit event cannot be turned into a row")
            self._give_up([event], "unconvertible audit event")
            return
        self._chain.link(row)
        self.recent.add(event.request_id, event.tenant_id)
        if self._journal is not None:
            try:
                self._journal.append(row)
            except OSError as exc:
                self.stats.journal_errors += 1
                self._alarm = f"audit journal failed: {type(exc).__name__}: {exc}"
                log.error("audit journal append failed (%s); request %s is held in memory "
                          "only until its batch is stored", exc, event.request_id)
        self._queue.append((event, row))
        if len(self._queue) >= self._batch_size:
            self._wake.set()

    def disk_free_bytes(self) -> int | None:
        """Free bytes on the volume of the spool and the journal (None before start, or when
        it cannot be read): what readiness checks, so it says what the disk says now."""
        directory = self._spool.directory
        if directory is None:
            return None
        try:
            found = os.statvfs(directory)
        except OSError:
            return None
        return found.f_bavail * found.f_frsize

    @property
    def backlog(self) -> int:
        return len(self._queue) + len(self._held)

    @property
    def problem(self) -> str | None:
        """Why audit rows are at risk right now (readiness fails while set)."""
        journal = self._journal.problem if self._journal is not None else None
        return self._alarm or journal or self._quarantine.problem

    def numbers(self) -> dict[str, int]:
        """Everything /metrics publishes about the writer."""
        numbers = dataclasses.asdict(self.stats)
        if self._journal is not None:
            numbers["journal_errors"] += self._journal.errors
        return {**numbers, "backlog": self.backlog,
                "rows_quarantined": self._quarantine.rows,
                "spool_rows": self._spool.rows, "spool_bytes": self._spool.size,
                "alarm": int(self.problem is not None)}

    async def start(self) -> None:
        await self._spool.open()  # takes over a dead predecessor's journal as spool segments
        if self._journal is not None:
            assert self._spool.directory is not None
            self._journal.open(self._spool.directory)
        self._task = asyncio.create_task(self._run(), name="audit-writer")

    async def stop(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
        # The deadline bounds every wait inside (no database call is started that could
        # outlive it), so nothing is cancelled half-way through a spool append.
        deadline = self._clock() + self._stop_timeout_s
        while not await self._pump(deadline):
            if self._clock() >= deadline:
                break
            await asyncio.sleep(self._interval_s)  # both failed: try again in a moment
        left = self.backlog
        if left and self._journal is not None and not self.stats.journal_errors:
            log.warning("audit: %d rows could not be stored before shutdown; they stay in the "
                        "journal and are written on the next start", left)
        elif left:
            self._give_up(self._held, "audit rows could not be stored before shutdown")
            self._give_up([event for event, _ in self._queue],
                          "audit events not stored before shutdown")
        self._held, self._queue = [], deque()
        if self._journal is not None:
            await self._journal.close(all_stored=not left)
        self._spool.close()
        if self._mirror is not None:
            self._mirror.close()

    async def _run(self) -> None:
        while not self._closing:
            try:
                await asyncio.wait_for(self._wake.wait(), self._interval_s)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._pump(None)
            except Exception:  # a bug must not end audit writing: say so and go on
                log.exception("audit writer: unexpected failure; retrying")
                self._alarm = "audit writer failed unexpectedly (see the log)"
                await asyncio.sleep(self._interval_s)

    async def _pump(self, deadline: float | None) -> bool:
        """Store the backlog batch by batch, replaying the spool first whenever the database
        may be tried. False when a batch could be stored nowhere (it stays held)."""
        while True:
            if self._closing and deadline is None:
                return True  # stop() takes over, with its deadline
            if self._spool.pending and self._db_may_be_tried(deadline):
                await self._replay(deadline)
            if not self._held:
                batch = [self._queue.popleft()
                         for _ in range(min(self._batch_size, len(self._queue)))]
                if not batch:
                    return True
                events = [event for event, _ in batch]
                self._observe(events)
                self._held = [row for _, row in batch]
                if self._mirror is not None:
                    await self._write_mirror(events)
            if self._held and not await self._store(self._held, deadline):
                return False
            if self._journal is not None and self._held:
                self._journal.release(self._held[-1]["seq"])  # stored: journal files may go
            self._held = []

    def _observe(self, events: list[AuditEvent]) -> None:
        if self._observer is None:
            return
        try:
            self._observer(events)
        except Exception:  # metrics are a view; the record itself must still be written
            log.exception("audit observer failed on a batch of %d events", len(events))

    async def _store(self, rows: list[Row], deadline: float | None) -> bool:
        if not self._spool.pending and self._db_may_be_tried(deadline):
            if await self._insert(rows, deadline):
                self._alarm = None
                return True
        try:
            await self._spool.append(rows)
        except OSError as exc:
            self._spool_failed(exc, f"{len(rows)} rows held in memory")
            return False
        self.stats.rows_spooled += len(rows)
        self._alarm = None
        return True

    async def _replay(self, deadline: float | None) -> None:
        while self._spool.pending and self._db_may_be_tried(deadline):
            if self._closing and deadline is None:
                return
            try:
                found = await self._spool.oldest()
            except OSError as exc:
                self._spool_failed(exc, "replay postponed")
                return
            assert found is not None
            segment, rows = found
            done = self._resume[1] if self._resume and self._resume[0] == segment.path.name else 0
            while done < len(rows):
                if not self._db_may_be_tried(deadline):
                    self._resume = (segment.path.name, done)
                    return
                batch = rows[done:done + self._batch_size]
                if not await self._insert(batch, deadline):
                    self._resume = (segment.path.name, done)
                    return
                done += len(batch)
            self._resume = None
            await self._spool.remove(segment)
            log.info("audit spool: replayed %d rows from %s", len(rows), segment.path.name)

    async def _insert(self, rows: list[Row], deadline: float | None) -> bool:
        """True once every row is stored or quarantined; False: retry later."""
        failure = await self._attempt(rows)
        if failure is not None:
            failure = await self._quarantine.settle(
                rows, failure, self._attempt, lambda: self._db_may_be_tried(deadline))
        if failure is None:
            return True
        self.stats.write_failures += 1
        self._retry_at = self._clock() + self._backoff_s
        log.warning("audit database write failed (%s: %s); spooling, retry in %.1f s",
                    type(failure).__name__, failure, self._backoff_s)
        self._backoff_s = min(self._backoff_s * 2, self._retry_max_s)
        return False

    async def _attempt(self, rows: list[Row]) -> Exception | None:
        try:
            # A hung database diverts rows to the spool instead of holding them forever.
            # Timed out after a commit, the batch is replayed later and inserts nothing twice.
            async with asyncio.timeout(self._insert_timeout_s):
                self.stats.rows_written += await self._sink.insert(rows)
        except Exception as exc:  # sorted by the caller: refused data, or unavailable
            return exc
        self._backoff_s = self._retry_min_s
        self._retry_at = 0.0
        return None

    def _db_may_be_tried(self, deadline: float | None) -> bool:
        now = self._clock()
        if deadline is not None and now + self._insert_timeout_s > deadline:
            return False  # shutting down: too little time left to wait on the database
        return now >= self._retry_at

    def _spool_failed(self, exc: OSError, consequence: str) -> None:
        self.stats.spool_errors += 1
        self._alarm = f"audit spool failed: {type(exc).__name__}: {exc}"
        log.error("audit spool failed (%s); %s", exc, consequence)

    async def _write_mirror(self, events: list[AuditEvent]) -> None:
        assert self._mirror is not None
        try:
            await self._mirror.write(events)
        except OSError:
            log.exception("audit JSON-lines mirror failed (the database record is unaffected)")

    def _give_up(self, items: list[AuditEvent] | list[Row], why: str) -> None:
        """The last resort, never silent: count each one and log it in full."""
        self._alarm = f"audit rows dropped: {why}"
        for item in items:
            self.stats.dropped += 1
            log.error("%s; not stored: %s", why, orjson.dumps(item, default=str).decode())
