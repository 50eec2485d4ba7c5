"""Background tasks of a running gateway: started when their part is built, cancelled and
awaited when the exit stack unwinds, so none outlives the app or logs a destroyed task."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from contextlib import AsyncExitStack
from typing import Any


def keep_running(stack: AsyncExitStack, work: Coroutine[Any, Any, None], name: str) -> None:
    task = asyncio.create_task(work, name=name)
    stack.push_async_callback(cancel, task)


async def cancel(task: asyncio.Future[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def wait_or_cancel(task: asyncio.Task[None], timeout_s: float) -> None:
    """For a task told to stop that ends on its own (a scrape in flight ends on its timeout):
    cancelled only as a last resort."""
    try:
        await asyncio.wait_for(task, timeout_s)
    except (TimeoutError, asyncio.CancelledError):
        pass
