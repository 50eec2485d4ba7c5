"""One keep-alive HTTP/1.1 client connection that times each exchange, built on asyncio.Protocol.

For SSE responses it also notes when the first event with non-empty `delta.content` arrived.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from enum import Enum, auto
from typing import cast

import orjson

MAX_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Exchange:
    """What one request/response exchange produced."""

    status: int
    first_token_ns: int  # monotonic_ns when the first content token arrived; 0 if none seen


class _State(Enum):
    HEAD = auto()
    BODY_SIZED = auto()  # Content-Length
    CHUNK_SIZE = auto()
    CHUNK_DATA = auto()
    CHUNK_CRLF = auto()
    TRAILERS = auto()
    BODY_TO_EOF = auto()  # neither length nor chunked: the body ends when the server closes


class ClientConnection(asyncio.Protocol):
    """Sends one request at a time and resolves a future when its response is complete."""

    def __init__(self, watch_tokens: bool) -> None:
        self._watch_tokens = watch_tokens
        self._transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._waiter: asyncio.Future[Exchange] | None = None
        self._state = _State.HEAD
        self._remaining = 0
        self._status = 0
        self._first_token_ns = 0
        self._sse = bytearray()
        self._now_ns = 0
        self.reusable = True  # False once the server said `connection: close` or hung up

    @classmethod
    async def open(cls, host: str, port: int, watch_tokens: bool) -> ClientConnection:
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(lambda: cls(watch_tokens), host, port)
        return protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        self._transport = None
        if self._state is _State.BODY_TO_EOF:
            self._finish()
        elif self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionResetError("server closed the connection"))

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def exchange(self, request: bytes) -> asyncio.Future[Exchange]:
        """Write a complete request; the future resolves when the whole response has arrived."""
        if self._transport is None or not self.reusable:
            raise ConnectionResetError("connection is closed")
        waiter: asyncio.Future[Exchange] = asyncio.get_running_loop().create_future()
        self._waiter = waiter
        self._state = _State.HEAD
        self._first_token_ns = 0
        self._sse.clear()
        self._transport.write(request)
        return waiter

    def data_received(self, data: bytes) -> None:
        # Arrival time of this read: the first token "arrived" when the bytes carrying it did.
        self._now_ns = time.monotonic_ns()
        self._buf += data
        try:
            self._advance()
        except (ValueError, IndexError) as exc:
            self.reusable = False
            if self._waiter is not None and not self._waiter.done():
                self._waiter.set_exception(ConnectionError(f"malformed response: {exc}"))
            self.close()

    def _advance(self) -> None:
        buf = self._buf
        while buf and self._waiter is not None:
            state = self._state
            if state is _State.HEAD:
                if not self._parse_head():
                    return
            elif state is _State.BODY_SIZED or state is _State.CHUNK_DATA:
                take = min(self._remaining, len(buf))
                self._body(buf, take)
                del buf[:take]
                self._remaining -= take
                if self._remaining == 0:
                    if state is _State.BODY_SIZED:
                        self._finish()
                    else:
                        self._state = _State.CHUNK_CRLF
            elif state is _State.CHUNK_SIZE:
                line_end = buf.find(b"\r\n")
                if line_end < 0:
                    return
                size = int(bytes(buf[:line_end]).split(b";", 1)[0], 16)
                del buf[: line_end + 2]
                self._remaining = size
                self._state = _State.CHUNK_DATA if size else _State.TRAILERS
            elif state is _State.CHUNK_CRLF:
                if len(buf) < 2:
                    return
                del buf[:2]
                self._state = _State.CHUNK_SIZE
            elif state is _State.TRAILERS:
                # Usually just the empty line; otherwise trailer fields up to a blank line.
                if buf.startswith(b"\r\n"):
                    del buf[:2]
                else:
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        return
                    del buf[: end + 4]
                self._finish()
            else:  # BODY_TO_EOF
                self._body(buf, len(buf))
                buf.clear()

    def _parse_head(self) -> bool:
        buf = self._buf
        head_end = buf.find(b"\r\n\r\n")
        if head_end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise ValueError("response head too large")
            return False
        head = bytes(buf[:head_end]).lower()
        del buf[: head_end + 4]
        self._status = int(head[9:12])
        if b"\r\nconnection: close" in head or not head.startswith(b"http/1.1"):
            self.reusable = False
        if b"\r\ntransfer-encoding:" in head and b"chunked" in head:
            self._state = _State.CHUNK_SIZE
            return True
        at = head.find(b"\r\ncontent-length:")
        if at >= 0:
            end = head.find(b"\r\n", at + 2)
            self._remaining = int(head[at + 17 : end if end >= 0 else None])
            self._state = _State.BODY_SIZED
            if self._remaining == 0:
                self._finish()
            return True
        if self._status in (204, 304) or 100 <= self._status < 200:
            self._finish()
            return True
        self.reusable = False
        self._state = _State.BODY_TO_EOF
        return True

    def _body(self, buf: bytearray, length: int) -> None:
        # Only streaming responses are read; a plain body is counted, not parsed.
        if not self._watch_tokens or self._first_token_ns or self._status != 200:
            return
        sse = self._sse
        # SSE allows CRLF line ends; dropping CR lets one separator search cover both forms.
        sse += buf[:length].replace(b"\r", b"")
        while True:
            end = sse.find(b"\n\n")
            if end < 0:
                return
            event = bytes(sse[:end])
            del sse[: end + 2]
            if _has_content(event):
                self._first_token_ns = self._now_ns
                sse.clear()
                return

    def _finish(self) -> None:
        self._state = _State.HEAD
        waiter = self._waiter
        self._waiter = None
        if waiter is not None and not waiter.done():
            waiter.set_result(Exchange(self._status, self._first_token_ns))


def _has_content(event: bytes) -> bool:
    """True for an SSE event whose JSON data carries a non-empty `choices[0].delta.content`,
    or a Responses API `response.output_text.delta` with a non-empty `delta`."""
    for line in event.split(b"\n"):
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return False
        try:
            chunk = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return False
        if isinstance(chunk, dict) and chunk.get("type") == "response.output_text.delta":
            return bool(chunk.get("delta"))
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not choices or not isinstance(choices[0], dict):
            return False
        delta = choices[0].get("delta")
        return isinstance(delta, dict) and bool(delta.get("content"))
    return False
