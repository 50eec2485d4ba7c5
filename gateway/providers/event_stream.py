"""An open upstream SSE response relayed as OpenAI chunk payloads, the first one held back.

Upstreams that already speak OpenAI's stream (vLLM) pass through untouched; others (Azure's
quirks, Anthropic's named events) go through an `EventTranslator`, a pure object that turns
each upstream data payload into zero or more OpenAI chunk payloads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import aiohttp

from gateway.errors import UpstreamFailed
from gateway.providers.http_pool import TRANSPORT_ERRORS, transport_error
from gateway.providers.sse import SSESplitter
from gateway.types import Backend
from gateway.upstream import DispatchError

DONE = b"[DONE]"


class EventTranslator(Protocol):
    @property
    def ready(self) -> bool:
        """Enough has been seen to commit to this backend (until then, failing over is
        invisible to the client)."""
        ...

    def feed(self, data: bytes) -> list[bytes]: ...

    def finish(self) -> list[bytes]:
        """The upstream ended the stream; may raise DispatchError if it ended too early."""
        ...


class UpstreamEventStream:
    """Implements `UpstreamStream` over an aiohttp response."""

    __slots__ = ("_backend", "_ended", "_pending", "_resp", "_splitter", "_translator", "first")

    def __init__(
        self,
        resp: aiohttp.ClientResponse,
        backend: Backend,
        translator: EventTranslator | None = None,
    ) -> None:
        self._resp = resp
        self._backend = backend
        self._translator = translator
        self._splitter = SSESplitter()
        self._pending: list[bytes] = []
        self._ended = False
        self.first = b""

    def _ready(self) -> bool:
        if not self._pending:
            return False
        return self._translator is None or self._translator.ready

    def _convert(self, events: list[bytes]) -> list[bytes]:
        """Upstream payloads → OpenAI payloads; `[DONE]` (and anything after it) ends it."""
        out: list[bytes] = []
        translator = self._translator
        for event in events:
            if event == DONE:
                self._ended = True
                break
            if translator is None:
                out.append(event)
            else:
                out.extend(translator.feed(event))
        if self._ended and translator is not None:
            out.extend(translator.finish())
        return out

    def _at_eof(self) -> list[bytes]:
        out = self._convert(self._splitter.flush())
        if not self._ended:
            self._ended = True
            if self._translator is not None:
                out.extend(self._translator.finish())
        return out

    async def start(self) -> None:
        """Wait for the first event: until it arrives, failing over is still invisible."""
        try:
            while not self._ready() and not self._ended:
                chunk = await self._resp.content.readany()
                if not chunk:
                    self._pending.extend(self._at_eof())
                    break
                self._pending.extend(self._convert(self._splitter.feed(chunk)))
            if not self._pending:
                raise DispatchError(
                    UpstreamFailed(f"backend {self._backend.name} closed an empty stream"),
                    retryable=True,
                )
        except TRANSPORT_ERRORS as exc:
            self._resp.close()
            raise transport_error(self._backend, exc) from exc
        except BaseException:
            self._resp.close()
            raise
        self.first = self._pending.pop(0)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending, self._pending = self._pending, []
        for event in pending:
            yield event
        content = self._resp.content
        while not self._ended:
            try:
                chunk = await content.readany()
            except TRANSPORT_ERRORS as exc:
                raise transport_error(self._backend, exc, mid_stream=True) from exc
            events = self._at_eof() if not chunk else self._convert(self._splitter.feed(chunk))
            for event in events:
                yield event

    async def aclose(self) -> None:
        # close(), not release(): an unfinished stream must drop the connection so the
        # upstream (vLLM) sees the disconnect and aborts the generation.
        if not self._resp.closed:
            self._resp.close()
