"""A fast mock OpenAI-compatible upstream for overhead benchmarks.

Raw asyncio Protocol + uvloop + orjson, HTTP/1.1 keep-alive; chat completions (plain and SSE),
and the same replies in Anthropic's Messages dialect on /v1/messages (mock_anthropic.py).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time
from collections.abc import Callable
from typing import Any, cast

import mock_anthropic
import orjson
import uvloop
from mock_http import chunk as _chunk
from mock_http import content_length as _content_length
from mock_http import head as _head
from mock_http import sized as _sized
from mock_replies import (
    ERROR_400,
    ERROR_404,
    MODELS_BODY,
    ReplyShape,
    Upstream,
    openai_event,
    openai_usage,
    token_text,
)

# A request head bigger than this is not something a benchmark client sends: refuse it rather
# than buffer without bound.
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024


class UpstreamProtocol(asyncio.Protocol):
    """One client connection: parses requests in order and answers them one at a time."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream
        self._transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._stream_task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._stream_task is not None:
            self._stream_task.cancel()
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buf += data
        # A pipelined request waits until the current stream has finished, as HTTP/1.1 requires.
        if self._stream_task is None:
            self._serve_buffered()

    def _serve_buffered(self) -> None:
        buf = self._buf
        while self._stream_task is None and self._transport is not None:
            head_end = buf.find(b"\r\n\r\n")
            if head_end < 0:
                if len(buf) > MAX_HEAD_BYTES:
                    self._transport.close()
                return
            head = bytes(buf[:head_end]).lower()
            line_end = head.find(b"\r\n")
            request_line = head if line_end < 0 else head[:line_end]
            parts = request_line.split(b" ")
            if len(parts) != 3:
                self._transport.close()
                return
            if b"\r\ntransfer-encoding:" in head:
                # Benchmark clients send Content-Length; chunked request bodies are refused.
                self._transport.write(_sized(b"411 Length Required", b"text/plain", b"", False))
                self._transport.close()
                return
            length = _content_length(head)
            if length < 0 or length > MAX_BODY_BYTES:
                self._transport.close()
                return
            body_start = head_end + 4
            if len(buf) < body_start + length:
                return
            body = bytes(buf[body_start : body_start + length])
            del buf[: body_start + length]
            keep_alive = parts[2] == b"http/1.1" and b"\r\nconnection: close" not in head
            self._dispatch(parts[0], parts[1], body, keep_alive)

    def _dispatch(self, method: bytes, path: bytes, body: bytes, keep_alive: bool) -> None:
        transport = self._transport
        assert transport is not None
        path = path.split(b"?", 1)[0]
        if method == b"post" and path == b"/v1/chat/completions":
            self._chat(body, keep_alive)
            return
        if method == b"post" and path == b"/v1/messages":
            self._messages(body, keep_alive)
            return
        status, content_type, payload = b"404 Not Found", b"application/json", ERROR_404
        if method == b"get" and path == b"/v1/models":
            status, payload = b"200 OK", MODELS_BODY
        elif method == b"get" and path == b"/health":
            status, content_type, payload = b"200 OK", b"text/plain", b"ok"
        elif method == b"get" and path == b"/metrics":
            status, content_type = b"200 OK", b"text/plain; version=0.0.4"
            payload = self._upstream.metrics_body()
        response = _sized(status, content_type, payload, keep_alive)
        transport.write(response)
        if not keep_alive:
            transport.close()

    def _json_request(self, body: bytes) -> dict[str, Any] | None:
        """The request's JSON object, or None after answering 400 and closing."""
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError:
            request = None
        if isinstance(request, dict):
            return request
        assert self._transport is not None
        self._transport.write(_sized(b"400 Bad Request", b"application/json", ERROR_400, False))
        self._transport.close()
        return None

    def _chat(self, body: bytes, keep_alive: bool) -> None:
        transport = self._transport
        assert transport is not None
        request = self._json_request(body)
        if request is None:
            return
        model = str(request.get("model") or "mock-model")
        if not request.get("stream"):
            reply = self._upstream.completion_body(model)
            transport.write(_sized(b"200 OK", b"application/json", reply, keep_alive))
            if not keep_alive:
                transport.close()
            return
        options = request.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        base = {
            "id": f"chatcmpl-mock-{next(self._upstream.ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return openai_event({**base, "choices": [choice]})

        tail = chunk({}, "stop")
        if include_usage:
            usage = openai_usage(self._upstream.shape.stream_tokens)
            tail += openai_event({**base, "choices": [], "usage": usage})
        tail += _chunk(b"data: [DONE]\n\n")
        first = chunk({"role": "assistant", "content": ""})
        self._start_stream(first, lambda i: chunk({"content": token_text(i)}), tail, keep_alive)

    def _messages(self, body: bytes, keep_alive: bool) -> None:
        """The Anthropic dialect: same text, same timing, Anthropic's framing."""
        transport = self._transport
        assert transport is not None
        request = self._json_request(body)
        if request is None:
            return
        upstream = self._upstream
        model = str(request.get("model") or "mock-model")
        message_id = f"msg_mock{next(upstream.ids)}"
        if not request.get("stream"):
            reply = mock_anthropic.message_body(
                message_id, model, upstream.reply_text, upstream.shape.reply_tokens
            )
            transport.write(_sized(b"200 OK", b"application/json", reply, keep_alive))
            if not keep_alive:
                transport.close()
            return
        head, token, tail = mock_anthropic.stream_script(
            message_id, model, token_text, upstream.shape.stream_tokens
        )
        self._start_stream(
            b"".join(map(_chunk, head)), lambda i: _chunk(token(i)),
            b"".join(map(_chunk, tail)), keep_alive,
        )

    def _start_stream(
        self, first: bytes, token: Callable[[int], bytes], tail: bytes, keep_alive: bool
    ) -> None:
        self._stream_task = asyncio.get_running_loop().create_task(
            self._stream(first, token, tail, keep_alive)
        )

    async def _stream(
        self, first: bytes, token: Callable[[int], bytes], tail: bytes, keep_alive: bool
    ) -> None:
        """Writes pre-framed HTTP chunks: the first event(s), one per token, the tail."""
        upstream = self._upstream
        shape = upstream.shape
        upstream.active_streams += 1
        try:
            extra = b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n"
            self._write(_head(b"200 OK", b"text/event-stream", extra, keep_alive) + b"\r\n")
            self._write(first)
            for i in range(shape.stream_tokens):
                await asyncio.sleep(shape.stream_interval_s)
                self._write(token(i))
            self._write(tail + b"0\r\n\r\n")
        except ConnectionError:
            return
        finally:
            upstream.active_streams -= 1
            self._stream_task = None
        if not keep_alive and self._transport is not None:
            self._transport.close()
        elif self._buf:
            self._serve_buffered()

    def _write(self, data: bytes) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("client went away mid-stream")
        transport.write(data)


async def serve(host: str, port: int, shape: ReplyShape) -> None:
    """Serve until SIGINT or SIGTERM."""
    loop = asyncio.get_running_loop()
    upstream = Upstream(shape)
    server = await loop.create_server(
        lambda: UpstreamProtocol(upstream), host, port, backlog=2048, reuse_address=True
    )
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--reply-tokens", type=int, default=16, help="non-streaming reply length")
    parser.add_argument("--stream-tokens", type=int, default=32, help="content chunks per stream")
    parser.add_argument("--stream-interval-ms", type=float, default=10.0)
    args = parser.parse_args()
    shape = ReplyShape(
        reply_tokens=args.reply_tokens,
        stream_tokens=args.stream_tokens,
        stream_interval_s=args.stream_interval_ms / 1000.0,
    )
    uvloop.run(serve(args.host, args.port, shape))


if __name__ == "__main__":
    main()
