"""GPU telemetry per deployment and minute (from its DCGM exporter): samples are summed in
memory and added to backend_gpu_minutes every flush, so the economics report reads a month of
utilisation as a few grouped rows (written by gpu_repository.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.deployments.gpu_repository import add_gpu_minutes

log = logging.getLogger("gateway.audit")


class GpuReading(Protocol):
    @property
    def util(self) -> float | None: ...

    @property
    def memory_used_bytes(self) -> int | None: ...


class GpuMinuteLog:
    """The GpuSink the DCGM poller feeds; flush() writes what has gathered."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._pending: dict[tuple[str, datetime], list[float]] = {}  # util sum, n, memory max

    def record_gpu(self, backend: str, sample: GpuReading, at_unix_s: float) -> None:
        minute = datetime.fromtimestamp(at_unix_s - at_unix_s % 60, UTC)
        entry = self._pending.setdefault((backend, minute), [0.0, 0, 0])
        if sample.util is not None:
            entry[0] += sample.util
            entry[1] += 1
        if sample.memory_used_bytes is not None:
            entry[2] = max(entry[2], sample.memory_used_bytes)

    async def flush(self) -> None:
        pending, self._pending = self._pending, {}
        if not pending:
            return
        rows = [{"backend": b, "minute": m, "util_sum": u, "samples": int(n),
                 "memory_used_max": int(mem)} for (b, m), (u, n, mem) in pending.items()]
        try:
            await add_gpu_minutes(self._engine, rows)
        except (OSError, SQLAlchemyError):
            # Telemetry, not money: a lost minute of utilisation is logged, not retried.
            log.exception("could not store %d minutes of GPU telemetry", len(rows))

    async def run(self, interval_s: float = 30.0) -> None:
        """Flush every interval until cancelled; the last flush is the caller's (close)."""
        while True:
            await asyncio.sleep(interval_s)
            await self.flush()

    async def close(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.flush()
