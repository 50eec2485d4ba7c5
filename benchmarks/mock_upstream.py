"""A fast mock OpenAI-compatible upstream for overhead benchmarks.

Raw asyncio Protocol + uvloop + orjson, HTTP/1.1 keep-alive; chat completions (plain and SSE).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import time
from dataclasses import dataclass
from typing import Any, cast

import orjson
import uvloop

# A request head bigger than this is not something a benchmark client sends: refuse it rather
# than buffer without bound.
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024
PROMPT_TOKENS = 12  # the usage we report; the mock does not tokenize

# Words cycled to make the reply text; one word plus a space is "one token" for the mock.
_WORDS = (
    "the quick brown fox jumps over a lazy dog while seven small birds sing softly "
    "near an old stone bridge beside calm water under a pale morning sky"
).split()


@dataclass(frozen=True, slots=True)
class ReplyShape:
    """How long replies are and how fast a stream emits its tokens."""

    reply_tokens: int
    stream_tokens: int
    stream_interval_s: float


def _token(index: int) -> str:
    return _WORDS[index % len(_WORDS)] + " "


def _head(status: bytes, content_type: bytes, extra: bytes, keep_alive: bool) -> bytes:
    connection = b"" if keep_alive else b"connection: close\r\n"
    status_line = b"HTTP/1.1 " + status + b"\r\n"
    return status_line + b"content-type: " + content_type + b"\r\n" + extra + connection


def _sized(status: bytes, content_type: bytes, body: bytes, keep_alive: bool) -> bytes:
    length = b"content-length: %d\r\n" % len(body)
    return _head(status, content_type, length, keep_alive) + b"\r\n" + body


def _chunk(payload: bytes) -> bytes:
    # One SSE event per HTTP chunk, the way streaming servers usually flush.
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _usage(completion_tokens: int) -> dict[str, int]:
    total = PROMPT_TOKENS + completion_tokens
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": completion_tokens,
        "total_tokens": total,
    }


def _event(obj: dict[str, Any]) -> bytes:
    return _chunk(b"data: " + orjson.dumps(obj) + b"\n\n")


_MODELS_BODY = orjson.dumps(
    {"object": "list", "data": [{"id": "mock-model", "object": "model", "owned_by": "mock"}]}
)
_ERROR_404 = orjson.dumps({"error": {"message": "not found", "type": "not_found_error"}})
_ERROR_400 = orjson.dumps({"error": {"message": "invalid JSON body", "type": "invalid_request"}})


class Upstream:
    """Shared state of one mock server: reply shape, id counter, and live stream count."""

    def __init__(self, shape: ReplyShape) -> None:
        self.shape = shape
        self.ids = itertools.count(1)
        self.active_streams = 0
        # The non-streaming reply text never changes, so build it once.
        self.reply_text = "".join(_token(i) for i in range(shape.reply_tokens)).rstrip()

    def metrics_body(self) -> bytes:
        # Just enough vLLM-style gauges for a gateway scraper to see a healthy, idle backend.
        running = self.active_streams
        return (
            b"# TYPE vllm:num_requests_running gauge\n"
            b'vllm:num_requests_running{model_name="mock-model"} %d\n'
            b"# TYPE vllm:num_requests_waiting gauge\n"
            b'vllm:num_requests_waiting{model_name="mock-model"} 0\n'
            b"# TYPE vllm:gpu_cache_usage_perc gauge\n"
            b'vllm:gpu_cache_usage_perc{model_name="mock-model"} 0.0\n'
            b"# TYPE vllm:kv_cache_usage_perc gauge\n"
            b'vllm:kv_cache_usage_perc{model_name="mock-model"} 0.0\n' % running
        )

    def completion_body(self, model: str) -> bytes:
        return orjson.dumps(
            {
                "id": f"chatcmpl-mock-{next(self.ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.reply_text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": _usage(self.shape.reply_tokens),
            }
        )


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
        status, content_type, payload = b"404 Not Found", b"application/json", _ERROR_404
        if method == b"get" and path == b"/v1/models":
            status, payload = b"200 OK", _MODELS_BODY
        elif method == b"get" and path == b"/health":
            status, content_type, payload = b"200 OK", b"text/plain", b"ok"
        elif method == b"get" and path == b"/metrics":
            status, content_type = b"200 OK", b"text/plain; version=0.0.4"
            payload = self._upstream.metrics_body()
        response = _sized(status, content_type, payload, keep_alive)
        transport.write(response)
        if not keep_alive:
            transport.close()

    def _chat(self, body: bytes, keep_alive: bool) -> None:
        transport = self._transport
        assert transport is not None
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError:
            request = None
        if not isinstance(request, dict):
            transport.write(_sized(b"400 Bad Request", b"application/json", _ERROR_400, False))
            transport.close()
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
        self._stream_task = asyncio.get_running_loop().create_task(
            self._stream(model, include_usage, keep_alive)
        )

    async def _stream(self, model: str, include_usage: bool, keep_alive: bool) -> None:
        upstream = self._upstream
        shape = upstream.shape
        upstream.active_streams += 1
        try:
            base = {
                "id": f"chatcmpl-mock-{next(upstream.ids)}",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
            }

            def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
                choice = {"index": 0, "delta": delta, "finish_reason": finish}
                return _event({**base, "choices": [choice]})

            extra = b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n"
            self._write(_head(b"200 OK", b"text/event-stream", extra, keep_alive) + b"\r\n")
            self._write(chunk({"role": "assistant", "content": ""}))
            for i in range(shape.stream_tokens):
                await asyncio.sleep(shape.stream_interval_s)
                self._write(chunk({"content": _token(i)}))
            tail = chunk({}, "stop")
            if include_usage:
                tail += _event({**base, "choices": [], "usage": _usage(shape.stream_tokens)})
            self._write(tail + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
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


def _content_length(lowered_head: bytes) -> int:
    """Content-Length from a lower-cased request head; 0 when absent, -1 when malformed."""
    at = lowered_head.find(b"\r\ncontent-length:")
    if at < 0:
        return 0
    start = at + len(b"\r\ncontent-length:")
    end = lowered_head.find(b"\r\n", start)
    try:
        return int(lowered_head[start : end if end >= 0 else None])
    except ValueError:
        return -1


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
