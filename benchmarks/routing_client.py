"""Open-loop streaming client for the routing benchmark: sends each request at its scheduled
time whatever the previous ones are doing, and records what the client saw: status, time to
the first content token (from the scheduled send time), which backend served it, and the cost
the gateway reported in the stream's final usage chunk.

Plain asyncio streams over keep-alive HTTP/1.1 connections to 127.0.0.1 (a pool of idle ones
is reused; more are opened when every one is busy).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import orjson

MAX_HEAD_BYTES = 64 * 1024
TRANSPORT_ERROR = 0  # pseudo-status: no HTTP response at all
STREAM_ERROR = -1  # pseudo-status: a 200 stream that failed or carried no content token
TIMEOUT = -2  # pseudo-status: no first token within the client's patience


@dataclass(slots=True)
class Outcome:
    index: int  # position in the workload
    kind: str
    scheduled_s: float  # monotonic time the request was due
    status: int = TRANSPORT_ERROR
    ttft_s: float | None = None  # scheduled send → first content token
    done_s: float | None = None  # monotonic time the response ended
    backend: str | None = None  # x-gateway-backend
    spilled: bool = False  # x-gateway-spill-over
    cost_usd: float = 0.0  # x_gateway.cost_usd of the final usage chunk
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prefix-cache hit the engine reported
    completion_tokens: int = 0
    request_id: str | None = None  # x-request-id: the key of the gateway's audit record
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.ttft_s is not None and self.error is None


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class Client:
    """Sends chat completions to one host:port; reuses idle keep-alive connections."""

    def __init__(
        self, port: int, api_key: str | None, timeout_s: float,
        first_token_timeout_s: float | None = None,
    ) -> None:
        self._host = "127.0.0.1"
        self._port = port
        self._auth = f"authorization: Bearer {api_key}\r\n" if api_key else ""
        self._timeout_s = timeout_s  # a whole exchange
        # A streaming client gives up when no token came this long after the request was due.
        self._first_token_timeout_s = first_token_timeout_s or timeout_s
        self._idle: list[_Conn] = []

    async def _connect(self) -> _Conn:
        while self._idle:
            conn = self._idle.pop()
            if not conn.writer.is_closing() and not conn.reader.at_eof():
                return conn
            conn.close()
        reader, writer = await asyncio.open_connection(self._host, self._port, limit=1 << 20)
        return _Conn(reader, writer)

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    async def get_json(self, path: str, headers: dict[str, str] | None = None) -> object:
        """GET path; the decoded JSON body (raises on a non-200 answer)."""
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = f"GET {path} HTTP/1.1\r\nhost: {self._host}:{self._port}\r\n{extra}\r\n"
        conn = await self._connect()
        reusable = False
        try:
            async with asyncio.timeout(self._timeout_s):
                conn.writer.write(head.encode())
                status, fields, reusable = await _read_head(conn.reader)
                body = bytearray()
                await _read_body(conn.reader, fields, body.extend)
        finally:
            if reusable:
                self._idle.append(conn)
            else:
                conn.close()
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}: {bytes(body[:300])!r}")
        return orjson.loads(body)

    async def stream_chat(self, outcome: Outcome, body: bytes) -> Outcome:
        """POST a streaming chat completion and fill in `outcome`; never raises."""
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nhost: {self._host}:{self._port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n{self._auth}\r\n"
        ).encode()
        conn: _Conn | None = None
        reusable = False
        loop = asyncio.get_running_loop()
        # The loop's clock is time.monotonic() under both asyncio and uvloop, but say it anyway.
        due_in_s = outcome.scheduled_s - time.monotonic()
        first_by = loop.time() + due_in_s + self._first_token_timeout_s
        try:
            async with asyncio.timeout_at(first_by) as deadline:

                def first_token() -> None:
                    deadline.reschedule(loop.time() + self._timeout_s)

                conn = await self._connect()
                conn.writer.write(head + body)
                outcome.status, fields, reusable = await _read_head(conn.reader)
                outcome.backend = fields.get("x-gateway-backend")
                outcome.spilled = fields.get("x-gateway-spill-over") == "true"
                outcome.request_id = fields.get("x-request-id")
                if outcome.status != 200:
                    raw = bytearray()
                    await _read_body(conn.reader, fields, raw.extend)
                    outcome.error = bytes(raw[:200]).decode(errors="replace")
                else:
                    events = _EventReader(outcome, first_token)
                    await _read_body(conn.reader, fields, events.feed)
                    events.finish()
        except TimeoutError:
            waited = "first token" if outcome.ttft_s is None else "end of stream"
            outcome.status, reusable = TIMEOUT, False
            outcome.error = f"client gave up waiting for the {waited}"
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            outcome.error, reusable = f"{type(exc).__name__}: {exc}"[:200], False
            if outcome.status == 200:
                outcome.status = STREAM_ERROR
        finally:
            outcome.done_s = time.monotonic()
            if conn is not None:
                if reusable:
                    self._idle.append(conn)
                else:
                    conn.close()
        return outcome


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bool]:
    raw = await reader.readuntil(b"\r\n\r\n")
    if len(raw) > MAX_HEAD_BYTES:
        raise ValueError("response head too large")
    lines = raw.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = value.strip()
    reusable = lines[0].startswith("HTTP/1.1") and fields.get("connection", "") != "close"
    if "content-length" not in fields and "chunked" not in fields.get("transfer-encoding", ""):
        reusable = False  # the body ends when the server closes
    return status, fields, reusable


async def _read_body(
    reader: asyncio.StreamReader, fields: dict[str, str], sink: Callable[[bytes], None]
) -> None:
    if "chunked" in fields.get("transfer-encoding", ""):
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";", 1)[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailer fields
                return
            data = await reader.readexactly(size + 2)
            sink(data[:-2])
    elif "content-length" in fields:
        sink(await reader.readexactly(int(fields["content-length"])))
    else:
        sink(await reader.read())


class _EventReader:
    """Splits an SSE body into events: notes the first content token, errors, and the
    gateway's x_gateway annotation on the usage chunk."""

    __slots__ = ("_buf", "_done", "_on_first_token", "_outcome")

    def __init__(self, outcome: Outcome, on_first_token: Callable[[], None]) -> None:
        self._outcome = outcome
        self._on_first_token = on_first_token
        self._buf = bytearray()
        self._done = False

    def feed(self, data: bytes) -> None:
        now = time.monotonic()
        buf = self._buf
        buf += data.replace(b"\r", b"")
        while True:
            end = buf.find(b"\n\n")
            if end < 0:
                return
            event = bytes(buf[:end])
            del buf[: end + 2]
            for line in event.split(b"\n"):
                if line.startswith(b"data:"):
                    self._data(line[5:].strip(), now)

    def _data(self, payload: bytes, now: float) -> None:
        outcome = self._outcome
        if payload == b"[DONE]":
            self._done = True
            return
        first_pending = outcome.ttft_s is None
        if not (first_pending or b'"x_gateway"' in payload or b'"error"' in payload):
            return  # an ordinary token after the first: nothing to learn
        obj = orjson.loads(payload)
        if not isinstance(obj, dict):
            return
        if obj.get("error"):
            error = obj["error"]
            message = error.get("message") if isinstance(error, dict) else error
            outcome.error = f"stream error: {message}"[:200]
            return
        annotation = obj.get("x_gateway")
        if isinstance(annotation, dict):
            outcome.cost_usd = float(annotation.get("cost_usd", 0.0))
            outcome.backend = str(annotation.get("backend", outcome.backend))
        usage = obj.get("usage")
        if isinstance(usage, dict):
            outcome.prompt_tokens = int(usage.get("prompt_tokens") or 0)
            outcome.completion_tokens = int(usage.get("completion_tokens") or 0)
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict):
                outcome.cached_tokens = int(details.get("cached_tokens") or 0)
        if first_pending:
            choices = obj.get("choices")
            if choices and isinstance(choices[0], dict):
                delta = choices[0].get("delta")
                if isinstance(delta, dict) and delta.get("content"):
                    outcome.ttft_s = now - outcome.scheduled_s
                    self._on_first_token()

    def finish(self) -> None:
        outcome = self._outcome
        if outcome.error is None and (not self._done or outcome.ttft_s is None):
            outcome.status = STREAM_ERROR
            outcome.error = "stream ended without [DONE]" if not self._done else "no content"


@dataclass(frozen=True, slots=True)
class Scheduled:
    at_s: float  # offset from the schedule's start
    index: int
    kind: str
    body: bytes


async def run_open_loop(
    client: Client, schedule: Sequence[Scheduled], start_s: float
) -> list[Outcome]:
    """Send every request at start_s + at_s (monotonic) and wait for all of them to end."""
    tasks: list[asyncio.Task[Outcome]] = []
    for item in schedule:
        due = start_s + item.at_s
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        outcome = Outcome(item.index, item.kind, due)
        tasks.append(asyncio.create_task(client.stream_chat(outcome, item.body)))
    return list(await asyncio.gather(*tasks))
