"""A streaming response that notices a client disconnect at once, not at the next write.

With ASGI 2.4 servers, Starlette's StreamingResponse learns of a disconnect only when a write
fails, which for a request queued behind others in vLLM can be many seconds. Here a watcher
waits on `receive()` and cancels the relay, which closes the upstream connection so vLLM
aborts the generation and frees its KV cache.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # tell nginx-style proxies in front of us not to buffer
]


class ClientStream(Protocol):
    """What a streamed body is: the routing Relay, or a front door's re-encoding of it."""

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class SSEResponse(Response):
    # A Response subclass so FastAPI passes it through untouched.
    def __init__(self, relay: ClientStream, headers: dict[str, str]) -> None:
        self._relay = relay
        self.status_code = 200
        self.background = None
        self.raw_headers = SSE_HEADERS + [(k.encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writer = asyncio.create_task(self._write(send))
        watcher = asyncio.create_task(_wait_for_disconnect(receive))
        try:
            await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (writer, watcher):
                if not task.done():
                    task.cancel()
            for task in (writer, watcher):
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await task
            await self._relay.aclose()

    async def _write(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        async for chunk in self._relay:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
