"""Delivery of engine tokens to HTTP clients: SSE frames for streams, the result otherwise.

Either way a client that goes away aborts its engine request (its KV blocks are freed and it
counts as finished_reason="abort"), as vLLM does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from gateway.sim.answers import AnswerPlan
from gateway.sim.engine import RequestHandle, TokenEvent
from gateway.sim.payloads import (
    SSE_DONE,
    ResponseMeta,
    chat_chunk,
    chat_delta,
    completion_chunk,
    sse,
    usage_chunk,
    usage_json,
)
from gateway.sim.protocol import GenerationOptions


class StreamAborted(Exception):
    """Raised inside a streaming body to drop the connection mid-stream (fault hook)."""


class QuietStreamAborts(logging.Filter):
    """Keeps uvicorn from logging a traceback for every deliberately dropped stream."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, StreamAborted)


class EngineStreamResponse(StreamingResponse):
    """A streaming response that aborts its engine request however the stream ends."""

    def __init__(self, content: AsyncIterator[bytes], handle: RequestHandle) -> None:
        super().__init__(content, media_type="text/event-stream")
        self._handle = handle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._handle.abort()  # no-op when it finished normally


async def finish_or_disconnect(handle: RequestHandle, receive: Receive) -> str | None:
    """Wait for the answer; None (and the request aborted) if the client disconnects first."""
    finished = asyncio.ensure_future(handle.wait_finished())
    gone = asyncio.ensure_future(_disconnected(receive))
    try:
        done, _ = await asyncio.wait({finished, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not finished.done():
            finished.cancel()
            handle.abort()
    return finished.result() if finished in done else None


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def stream_chat(
    handle: RequestHandle,
    plan: AnswerPlan,
    meta: ResponseMeta,
    options: GenerationOptions,
    abort_after: int | None,
) -> AsyncIterator[bytes]:
    """SSE as vLLM sends it: the role chunk, one chunk per token as it is decoded (the last one
    carrying finish_reason), the usage chunk if asked for, then [DONE]."""
    usage = usage_json(handle.usage) if options.continuous_usage else None
    yield sse(chat_chunk(meta, {"role": "assistant", "content": ""}, usage=usage))
    async for event in token_events(handle, abort_after):
        finish = plan.api_finish_reason if event.finish_reason is not None else None
        usage = usage_json(handle.usage) if options.continuous_usage else None
        yield sse(chat_chunk(meta, chat_delta(plan, event.index), finish, usage))
    if handle.finish_reason == "abort":
        return  # engine shut down: end without [DONE], like a dropped upstream
    if options.include_usage:
        yield sse(usage_chunk(meta, "chat.completion.chunk", handle.usage))
    yield SSE_DONE


async def stream_completion(
    handle: RequestHandle,
    plan: AnswerPlan,
    meta: ResponseMeta,
    options: GenerationOptions,
    abort_after: int | None,
) -> AsyncIterator[bytes]:
    """SSE for /v1/completions: same shape as the response, one text piece per chunk."""
    async for event in token_events(handle, abort_after):
        finish = plan.api_finish_reason if event.finish_reason is not None else None
        usage = usage_json(handle.usage) if options.continuous_usage else None
        yield sse(completion_chunk(meta, plan.pieces[event.index], finish, usage))
    if handle.finish_reason == "abort":
        return
    if options.include_usage:
        yield sse(usage_chunk(meta, "text_completion", handle.usage))
    yield SSE_DONE


async def token_events(
    handle: RequestHandle, abort_after: int | None
) -> AsyncIterator[TokenEvent]:
    sent = 0
    while True:
        if abort_after is not None and sent >= abort_after:
            raise StreamAborted(f"stream dropped after {sent} tokens (sim fault)")
        event = await handle.next_event()
        if event.finish_reason == "abort":
            return
        yield event
        sent += 1
        if event.finish_reason is not None:
            return
