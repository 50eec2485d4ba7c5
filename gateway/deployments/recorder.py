"""Declares each policy's self-hosted deployments as the policy comes into force (start-up and
every reload), so the deployment record follows the policy without blocking its reload."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Generic, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from gateway.deployments.repository import DeclaredGpus, DeploymentLog

log = logging.getLogger("gateway.audit")


P = TypeVar("P")


class DeploymentRecorder(Generic[P]):
    """A PolicyStore listener: declares each policy's deployments as it comes into force.
    It may be called from the reload thread; the write runs on the gateway's loop."""

    def __init__(self, deployments: DeploymentLog, loop: asyncio.AbstractEventLoop,
                 declared: Callable[[P], Sequence[DeclaredGpus]]) -> None:
        self._log = deployments
        self._loop = loop
        self._declared = declared
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, policy: P) -> None:
        found = tuple(self._declared(policy))
        self._loop.call_soon_threadsafe(self._spawn, found)

    def _spawn(self, declared: tuple[DeclaredGpus, ...]) -> None:
        task = self._loop.create_task(self.record(declared), name="gpu-deployments")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def record(self, declared: Sequence[DeclaredGpus]) -> None:
        try:
            await self._log.declare(declared, datetime.now(UTC))
        except (OSError, SQLAlchemyError):
            # Reports then charge from the last record; the next reload or start tries again.
            log.exception("could not record the policy's GPU deployments")

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
