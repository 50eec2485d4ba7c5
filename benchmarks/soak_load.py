"""Open-loop load for the soak benchmark: requests leave at a fixed mean rate (Poisson arrivals)
whatever the earlier ones are doing, a seeded mix of streaming and non-streaming chat
completions; every completion is filed into the window it finished in.

Latency counts from the scheduled send time, so a client or gateway that falls behind shows up
in the figures instead of silently lowering the offered rate (no coordinated omission).
"""

from __future__ import annotations

import asyncio
import random
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field

import orjson
from http_connection import ClientConnection, Exchange

REQUEST_TIMEOUT_S = 60.0
MAX_IN_FLIGHT = 2048  # beyond this the client sheds arrivals (counted) rather than pile on
PROMPTS = (
    "Say hello in one short sentence.",
    "Name three colours of the rainbow.",
    "What is the capital of France? Answer in one word.",
    "Write a haiku about the sea.",
    "Give one tip for writing clear code.",
    "Summarise the plot of Hamlet in one sentence.",
    "List two prime numbers above ten.",
    "Explain what a load balancer does, briefly.",
)
TRANSPORT_ERROR = 0  # pseudo-status: no HTTP response, or no answer within the timeout
NO_CONTENT = -1  # pseudo-status: a 200 stream that never carried a content token


@dataclass(frozen=True, slots=True)
class Requests:
    """Every request the mix draws from, pre-encoded once: (stream?, bytes) pairs."""

    plain: tuple[bytes, ...]
    streaming: tuple[bytes, ...]

    @classmethod
    def build(cls, host: str, port: int, model: str, api_key: str, max_tokens: int) -> Requests:
        def encode(prompt: str, stream: bool) -> bytes:
            body: dict[str, object] = {
                "model": model,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens,
            }
            if stream:
                body["stream"] = True
                body["stream_options"] = {"include_usage": True}
            payload = orjson.dumps(body)
            head = (
                f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}:{port}\r\n"
                f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n"
                f"authorization: Bearer {api_key}\r\n\r\n"
            )
            return head.encode() + payload

        return cls(tuple(encode(p, False) for p in PROMPTS),
                   tuple(encode(p, True) for p in PROMPTS))


@dataclass(slots=True)
class Window:
    """What finished inside one sampling window."""

    latencies_ns: array[int] = field(default_factory=lambda: array("q"))
    ttfts_ns: array[int] = field(default_factory=lambda: array("q"))
    failures: Counter[int] = field(default_factory=Counter)
    sent: int = 0
    shed: int = 0  # arrivals dropped because MAX_IN_FLIGHT requests were already open
    max_lag_ns: int = 0  # how late the client sent its most delayed request

    @property
    def ok(self) -> int:
        return len(self.latencies_ns)

    @property
    def errors(self) -> int:
        return sum(self.failures.values())


class OpenLoop:
    """Sends the mix to one host:port; `window` is swapped by the caller between samples."""

    def __init__(self, host: str, port: int, requests: Requests, stream_share: float,
                 seed: int = 0) -> None:
        self._host, self._port = host, port
        self._requests = requests
        self._stream_share = stream_share
        self._rng = random.Random(seed)
        self._idle: dict[bool, list[ClientConnection]] = {False: [], True: []}
        self._tasks: set[asyncio.Task[None]] = set()
        self.window = Window()
        self.answered = 0  # requests that got an HTTP response, any status, all windows
        self.unanswered = 0  # transport errors and timeouts, all windows

    def take_window(self) -> Window:
        finished, self.window = self.window, Window()
        return finished

    @property
    def in_flight(self) -> int:
        return len(self._tasks)

    async def run_open(self, rate_per_s: float, duration_s: float) -> None:
        """Poisson arrivals at `rate_per_s` for `duration_s`, then wait for what is open."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        due = start
        while True:
            due += self._rng.expovariate(rate_per_s)
            if due - start >= duration_s:
                break
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            self._launch(due)
        await self.drain()

    async def run_closed(self, concurrency: int, duration_s: float) -> int:
        """`concurrency` loops each sending the next request when the last ends; returns how
        many succeeded (the rig's capacity, measured with the same mix)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + duration_s
        ok_before = self.window.ok

        async def one_loop() -> None:
            while loop.time() < end:
                await self._send(loop.time())

        await asyncio.gather(*(one_loop() for _ in range(concurrency)))
        return self.window.ok - ok_before

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=REQUEST_TIMEOUT_S + 5)

    def close(self) -> None:
        for pool in self._idle.values():
            for conn in pool:
                conn.close()
            pool.clear()

    def _launch(self, due: float) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT:
            self.window.shed += 1
            return
        task = asyncio.get_running_loop().create_task(self._send(due))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, due: float) -> None:
        stream = self._rng.random() < self._stream_share
        pool = self._requests.streaming if stream else self._requests.plain
        request = pool[self._rng.randrange(len(pool))]
        due_ns = int(due * 1e9)
        window = self.window
        window.sent += 1
        window.max_lag_ns = max(window.max_lag_ns, time.monotonic_ns() - due_ns)
        exchange: Exchange | None = None
        conn: ClientConnection | None = None
        try:
            conn = await self._connection(stream)
            exchange = await asyncio.wait_for(conn.exchange(request), REQUEST_TIMEOUT_S)
        except (OSError, ConnectionError, TimeoutError):
            exchange = None
        done_ns = time.monotonic_ns()
        self._record(stream, due_ns, done_ns, exchange)
        if conn is not None:
            if exchange is not None and conn.reusable:
                self._idle[stream].append(conn)
            else:
                conn.close()

    async def _connection(self, stream: bool) -> ClientConnection:
        idle = self._idle[stream]
        while idle:
            conn = idle.pop()
            if conn.reusable:
                return conn
            conn.close()
        return await ClientConnection.open(self._host, self._port, stream)

    def _record(self, stream: bool, due_ns: int, done_ns: int, exchange: Exchange | None) -> None:
        window = self.window  # the window the request finished in
        if exchange is None:
            window.failures[TRANSPORT_ERROR] += 1
            self.unanswered += 1
            return
        self.answered += 1
        if exchange.status != 200:
            window.failures[exchange.status] += 1
        elif stream and not exchange.first_token_ns:
            window.failures[NO_CONTENT] += 1
        else:
            window.latencies_ns.append(done_ns - due_ns)
            if stream:
                window.ttfts_ns.append(exchange.first_token_ns - due_ns)
