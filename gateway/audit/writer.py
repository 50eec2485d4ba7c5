"""Batched, off-the-request-path audit recording.

The request path only appends to an in-memory queue (no I/O, no await). A background task
drains it in batches to an `AuditSink`. Shutdown drains what is left. If a sink fails, the
batch is kept and retried, and the failure is logged: nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections import deque
from typing import IO, Protocol

import orjson

from gateway.types import AuditEvent

log = logging.getLogger("gateway.audit")


class AuditSink(Protocol):
    async def write(self, events: list[AuditEvent]) -> None: ...


class JsonLinesSink:
    """One JSON object per line to a file or stderr: the embedded default's record."""

    def __init__(self, path: str = "-") -> None:
        self._path = path
        self._file: IO[bytes] | None = None

    def _out(self) -> IO[bytes]:
        if self._file is None:
            self._file = sys.stderr.buffer if self._path == "-" else open(self._path, "ab")
        return self._file

    async def write(self, events: list[AuditEvent]) -> None:
        # orjson serialises (slotted) dataclasses natively: no asdict() deep copy per event.
        data = b"".join(orjson.dumps(e) + b"\n" for e in events)
        await asyncio.to_thread(self._write_blocking, data)

    def _write_blocking(self, data: bytes) -> None:
        out = self._out()
        out.write(data)
        out.flush()

    def close(self) -> None:
        if self._file is not None and self._path != "-":
            self._file.close()
        self._file = None


class AuditWriter:
    def __init__(self, sink: AuditSink, *, batch_size: int = 500, interval_s: float = 0.2) -> None:
        self._sink = sink
        self._batch_size = batch_size
        self._interval_s = interval_s
        self._queue: deque[AuditEvent] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def record(self, event: AuditEvent) -> None:
        self._queue.append(event)
        if len(self._queue) >= self._batch_size:
            self._wake.set()

    @property
    def backlog(self) -> int:
        return len(self._queue)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="audit-writer")

    async def stop(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
        await self._drain()

    async def _run(self) -> None:
        while not self._closing:
            try:
                await asyncio.wait_for(self._wake.wait(), self._interval_s)
            except TimeoutError:
                pass
            self._wake.clear()
            await self._drain()

    async def _drain(self) -> None:
        while self._queue:
            batch = [self._queue.popleft() for _ in range(min(self._batch_size, len(self._queue)))]
            try:
                await self._sink.write(batch)
            except Exception:
                # Put the batch back in order and try again on the next tick.
                self._queue.extendleft(reversed(batch))
                log.exception("audit sink failed; %d events held for retry", len(self._queue))
                if self._closing:
                    raise
                return
