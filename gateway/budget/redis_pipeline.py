"""Script calls made in the same event-loop turn go to Redis as one pipeline (one round trip).

Under load many requests reserve and settle at once. Each call on its own pays redis-py's
fixed cost (a pooled connection checked out and back, a timeout scope, a write and a read
wake-up); coalescing them pays it once per turn. With one request in flight a batch is one
call, so nothing waits for company: the flush is scheduled for the very next loop turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError

from gateway.budget.limits import BudgetUnavailable

_Call = tuple[AsyncScript, Sequence[str], Sequence[Any], "asyncio.Future[Any]"]


class ScriptPipeline:
    def __init__(self, client: Redis, timeout_s: float) -> None:
        self._client = client
        self._timeout_s = timeout_s
        self._pending: list[_Call] = []
        self._sending: set[asyncio.Task[None]] = set()

    async def call(self, script: AsyncScript, keys: Sequence[str], args: Sequence[Any]) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((script, keys, args, future))
        if len(self._pending) == 1:
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.create_task(self._send(batch))
        self._sending.add(task)  # a reference, or the task may be collected mid-flight
        task.add_done_callback(self._sending.discard)

    async def _send(self, batch: list[_Call]) -> None:
        try:
            async with asyncio.timeout(self._timeout_s):
                results = await self._execute(batch)
        except (RedisError, OSError, TimeoutError) as exc:
            failure = BudgetUnavailable(f"budget store unavailable: {exc!r}")
            for *_, future in batch:
                if not future.done():
                    future.set_exception(failure)
            return
        for (*_, future), result in zip(batch, results, strict=True):
            if future.done():  # its caller gave up (cancelled): nothing to deliver
                continue
            if isinstance(result, Exception):
                future.set_exception(BudgetUnavailable(f"budget store error: {result!r}"))
            else:
                future.set_result(result)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        results = await self._pipeline(batch)
        if any(isinstance(r, NoScriptError) for r in results):
            # Redis restarted or its script cache was flushed: load the scripts, send again.
            for script in {id(call[0]): call[0] for call in batch}.values():
                await self._client.script_load(script.script)
            results = await self._pipeline(batch)
        return results

    async def _pipeline(self, batch: list[_Call]) -> list[Any]:
        pipe = self._client.pipeline(transaction=False)
        for script, keys, args, _ in batch:
            pipe.evalsha(script.sha, len(keys), *keys, *args)
        return await pipe.execute(raise_on_error=False)  # type: ignore[no-any-return]
