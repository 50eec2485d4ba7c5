"""Micro-batching in front of the accurate encoder: concurrent requests are gathered for a short
window (or up to a batch size) and sent to a worker process as one batch, so the event loop only
queues, waits and hands out vectors. Bounded: a full queue and a slow batch are typed errors."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from gateway.classify.encoder_workers import WorkerConfig, WorkerProcesses
from gateway.classify.static_encoder import EncoderInfo
from gateway.errors import GatewayError


class BatchEncoder(Protocol):
    """What runs a batch: worker processes in production, an in-process fake in tests."""

    async def encode_batch(self, texts: list[str]) -> np.ndarray: ...

    async def warm(self, timeout_s: float) -> EncoderInfo: ...

    async def aclose(self) -> None: ...


class EncoderPoolError(GatewayError):
    """The accurate encoder could not answer; the request may retry (or classify statically)."""

    status = 503
    error_type = "service_unavailable"
    code = "classifier_unavailable"
    should_retry = True


class EncoderPoolOverloaded(EncoderPoolError):
    code = "classifier_overloaded"


class EncoderPoolTimeout(EncoderPoolError):
    code = "classifier_timeout"


class EncoderPoolClosed(EncoderPoolError):
    code = "classifier_closed"


class EncoderBatchFailed(EncoderPoolError):
    """The batch this request was in failed; `__cause__` is what the encoder raised."""


@dataclass(frozen=True, slots=True)
class PoolLimits:
    window_s: float = 0.002  # how long the first request of a batch waits for company
    max_batch: int = 32
    max_queue: int = 1024  # requests waiting for a batch; one more is refused
    batch_timeout_s: float = 5.0
    max_in_flight: int = 2  # batches at once: one per worker, so a busy pool grows batches

    def __post_init__(self) -> None:
        if self.window_s < 0 or self.batch_timeout_s <= 0:
            raise ValueError("window_s must be >= 0 and batch_timeout_s > 0")
        if min(self.max_batch, self.max_queue, self.max_in_flight) < 1:
            raise ValueError("max_batch, max_queue and max_in_flight must be at least 1")


@dataclass(slots=True)
class _Request:
    text: str
    future: asyncio.Future[np.ndarray]
    arrived_s: float = field(default_factory=time.monotonic)


class EncoderPool:
    """`await pool.encode(text)` → the text's unit vector. Use as an async context manager (or
    `start()` / `close()`), from one event loop."""

    def __init__(self, encoder: BatchEncoder, limits: PoolLimits | None = None) -> None:
        self._encoder = encoder
        self.limits = limits or PoolLimits()
        self._pending: deque[_Request] = deque()
        self._arrived = asyncio.Event()
        self._slots = asyncio.Semaphore(self.limits.max_in_flight)
        self._batches: set[asyncio.Task[None]] = set()
        self._dispatcher: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    def processes(cls, config: WorkerConfig | None = None, workers: int = 2,
                  limits: PoolLimits | None = None) -> EncoderPool:
        """A pool over `workers` spawned processes, one batch in flight per worker."""
        limits = limits or PoolLimits(max_in_flight=workers)
        return cls(WorkerProcesses(config or WorkerConfig(), workers), limits)

    async def __aenter__(self) -> EncoderPool:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def start(self) -> None:
        if self._closed:
            raise EncoderPoolClosed("the encoder pool is closed")
        if self._dispatcher is None:
            self._dispatcher = asyncio.create_task(self._dispatch(), name="encoder-pool")

    async def warm(self, timeout_s: float = 60.0) -> EncoderInfo:
        """Loads the model in every worker before the first request would; raises what the
        load raised (FullEncoderUnavailable names what is missing)."""
        return await asyncio.wait_for(self._encoder.warm(timeout_s), timeout_s + 5.0)

    async def encode(self, text: str) -> np.ndarray:
        if self._closed or self._dispatcher is None:
            raise EncoderPoolClosed("the encoder pool is not running")
        if len(self._pending) >= self.limits.max_queue:
            raise EncoderPoolOverloaded(
                f"the accurate classifier has {len(self._pending)} requests waiting; retry shortly")
        request = _Request(text, asyncio.get_running_loop().create_future())
        self._pending.append(request)
        self._arrived.set()
        # A caller cancelled here cancels only its own future; its batch skips or ignores it.
        return await request.future

    async def close(self) -> None:
        """Refuses new requests, fails waiting ones, lets running batches finish (each bounded
        by its timeout) and stops the workers."""
        if self._closed:
            return
        self._closed = True
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
        while self._pending:
            _fail(self._pending.popleft(), EncoderPoolClosed("the encoder pool closed"))
        await asyncio.gather(*self._batches, return_exceptions=True)
        await self._encoder.aclose()

    async def _dispatch(self) -> None:
        while True:
            await self._slots.acquire()
            try:
                batch = await self._next_batch()
            except BaseException:
                self._slots.release()
                raise
            task = asyncio.create_task(self._run(batch))
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)

    async def _next_batch(self) -> list[_Request]:
        """Waits for a first live request, then for company until its window closes or the
        batch is full; requests cancelled meanwhile are dropped, not sent."""
        limits = self.limits
        while True:
            while not self._pending:
                self._arrived.clear()
                await self._arrived.wait()
            deadline = self._pending[0].arrived_s + limits.window_s
            while len(self._pending) < limits.max_batch:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._arrived.clear()
                try:
                    # Waiting on the event (never on a queue get) cannot lose a request.
                    await asyncio.wait_for(self._arrived.wait(), remaining)
                except TimeoutError:
                    break
            batch: list[_Request] = []
            while self._pending and len(batch) < limits.max_batch:
                request = self._pending.popleft()
                if not request.future.done():
                    batch.append(request)
            if batch:
                return batch

    async def _run(self, batch: list[_Request]) -> None:
        try:
            vectors = await asyncio.wait_for(self._encoder.encode_batch([r.text for r in batch]),
                                             self.limits.batch_timeout_s)
        except TimeoutError:
            # The worker may still be busy with it; its late answer is dropped.
            _fail_all(batch, lambda: EncoderPoolTimeout(
                f"the accurate classifier took over {self.limits.batch_timeout_s:g} s"
                f" for a batch of {len(batch)}"))
        except asyncio.CancelledError:
            _fail_all(batch, lambda: EncoderPoolClosed("the encoder pool closed"))
            raise
        except Exception as exc:
            cause = exc
            _fail_all(batch, lambda: _failed(batch, cause))
        else:
            if vectors.shape[0] != len(batch):
                _fail_all(batch, lambda: EncoderBatchFailed(
                    f"the encoder answered {vectors.shape[0]} vectors for {len(batch)} texts"))
            else:
                for request, vector in zip(batch, vectors, strict=True):
                    if not request.future.done():
                        request.future.set_result(vector.copy())
        finally:
            self._slots.release()


def _failed(batch: list[_Request], exc: Exception) -> EncoderBatchFailed:
    error = EncoderBatchFailed(f"the accurate classifier failed on a batch of {len(batch)}:"
                               f" {type(exc).__name__}: {exc}")
    error.__cause__ = exc
    return error


def _fail_all(batch: list[_Request], make: Callable[[], EncoderPoolError]) -> None:
    # One exception object per caller: a shared one would gather every caller's traceback.
    for request in batch:
        _fail(request, make())


def _fail(request: _Request, error: BaseException) -> None:
    if not request.future.done():
        request.future.set_exception(error)
