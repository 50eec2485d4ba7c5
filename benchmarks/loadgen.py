"""Closed-loop HTTP/1.1 load generator: N keep-alive connections, each sending its next request
as soon as the previous response ends; per-request latency and streaming time to first token.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import orjson
import uvloop
from http_connection import ClientConnection, Exchange
from load_result import NO_CONTENT, LoadResult, WindowSamples, describe, summarize

READY_TIMEOUT_S = 30.0
RESULT_GRACE_S = 30.0  # beyond the planned end, how long to wait for a worker's results
START_DELAY_S = 0.05  # after every worker is connected, so all begin together

# Readings taken at the start and the end of the measured window, e.g. CPU seconds per process.
Probe = Callable[[], tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class Target:
    """Where to send and exactly what: a complete request, pre-encoded once."""

    host: str
    port: int
    request: bytes
    stream: bool

    @classmethod
    def chat(
        cls, host: str, port: int, model: str, stream: bool, api_key: str | None = None
    ) -> Target:
        body: dict[str, object] = {
            "model": model,
            "messages": [{"role": "user", "content": "Say hello in one short sentence."}],
            "max_tokens": 32,
        }
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        payload = orjson.dumps(body)
        auth = f"authorization: Bearer {api_key}\r\n" if api_key else ""
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}:{port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n{auth}\r\n"
        )
        return cls(host, port, head.encode() + payload, stream)

    @classmethod
    def responses(
        cls, host: str, port: int, model: str, stream: bool, api_key: str | None = None
    ) -> Target:
        """The same question as `chat`, asked through the Responses API (/v1/responses)."""
        body: dict[str, object] = {
            "model": model, "input": "Say hello in one short sentence.",
            "max_output_tokens": 32,
        }
        if stream:
            body["stream"] = True
        payload = orjson.dumps(body)
        auth = f"authorization: Bearer {api_key}\r\n" if api_key else ""
        head = (
            f"POST /v1/responses HTTP/1.1\r\nhost: {host}:{port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n{auth}\r\n"
        )
        return cls(host, port, head.encode() + payload, stream)


@dataclass(frozen=True, slots=True)
class LoadPlan:
    target: Target
    concurrency: int
    duration_s: float
    warmup_s: float
    processes: int = 1


async def _worker(target: Target, window: tuple[int, int], sink: _Sink) -> None:
    start_ns, end_ns = window
    conn = await ClientConnection.open(target.host, target.port, target.stream)
    request = target.request
    try:
        while True:
            t0 = time.monotonic_ns()
            if t0 >= end_ns:
                return
            try:
                exchange = await conn.exchange(request)
            except ConnectionError:
                exchange = None
            t1 = time.monotonic_ns()
            if start_ns <= t1 <= end_ns:
                sink.record(t0, t1, exchange)
            if exchange is None or not conn.reusable:
                conn.close()
                conn = await ClientConnection.open(target.host, target.port, target.stream)
    finally:
        conn.close()


class _Sink:
    """Where workers of one process record what finished inside the window."""

    def __init__(self, stream: bool) -> None:
        self.stream = stream
        self.latencies = array("q")
        self.ttfts = array("q")
        self.statuses: Counter[int] = Counter()
        self.transport_errors = 0

    def record(self, t0: int, t1: int, exchange: Exchange | None) -> None:
        if exchange is None:
            self.transport_errors += 1
        elif exchange.status != 200:
            self.statuses[exchange.status] += 1
        elif self.stream and not exchange.first_token_ns:
            self.statuses[NO_CONTENT] += 1  # a 200 stream without any content token is a failure
        else:
            self.latencies.append(t1 - t0)
            if exchange.first_token_ns:
                self.ttfts.append(exchange.first_token_ns - t0)


async def _run_connections(
    target: Target, concurrency: int, pipe: multiprocessing.connection.Connection
) -> WindowSamples:
    # Connect first so that connection set-up is outside the measurement.
    first = await ClientConnection.open(target.host, target.port, False)
    first.close()
    pipe.send("ready")
    start_s, warmup_s, duration_s = pipe.recv()
    window_start_ns = int((start_s + warmup_s) * 1e9)
    window_end_ns = int((start_s + warmup_s + duration_s) * 1e9)
    sink = _Sink(target.stream)
    await asyncio.sleep(max(0.0, start_s - time.monotonic()))
    window = (window_start_ns, window_end_ns)
    tasks = [asyncio.create_task(_worker(target, window, sink)) for _ in range(concurrency)]
    await asyncio.sleep(max(0.0, start_s + warmup_s - time.monotonic()))
    cpu_start_s = time.process_time()
    await asyncio.sleep(max(0.0, start_s + warmup_s + duration_s - time.monotonic()))
    cpu_s = time.process_time() - cpu_start_s
    # Closed loop: whatever is still in flight at the end is abandoned, not waited for.
    for task in tasks:
        task.cancel()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    unexpected = [o for o in failures if not isinstance(o, asyncio.CancelledError)]
    if unexpected:
        raise unexpected[0]
    return WindowSamples(
        latencies_ns=sink.latencies.tobytes(),
        ttfts_ns=sink.ttfts.tobytes(),
        statuses=dict(sink.statuses),
        transport_errors=sink.transport_errors,
        cpu_s=cpu_s,
    )


def _process_main(
    target: Target, concurrency: int, pipe: multiprocessing.connection.Connection
) -> None:
    # Ctrl-C reaches the whole process group; the parent alone decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        result = uvloop.run(_run_connections(target, concurrency, pipe))
        pipe.send(result)
    except (OSError, ConnectionError, ValueError) as exc:
        pipe.send(f"{type(exc).__name__}: {exc}")
    finally:
        pipe.close()


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    shares = [base + (1 if i < extra else 0) for i in range(parts)]
    return [share for share in shares if share > 0]  # never start a process with nothing to do


def _receive(pipe: multiprocessing.connection.Connection, deadline: float) -> object:
    if not pipe.poll(max(0.0, deadline - time.monotonic())):
        raise TimeoutError("load generator process did not answer in time")
    try:
        return pipe.recv()
    except EOFError:
        raise RuntimeError("load generator process died (see its traceback above)") from None


def run_load(plan: LoadPlan, probe: Probe | None = None) -> LoadResult:
    """Run one measured window in worker processes; `probe` is read at the window's two edges
    (e.g. CPU counters) and the result carries the difference of each of its readings."""
    ctx = multiprocessing.get_context("spawn")
    shares = _split(plan.concurrency, max(1, plan.processes))
    pipes: list[multiprocessing.connection.Connection] = []
    procs: list[multiprocessing.process.BaseProcess] = []
    finished = False
    try:
        for share in shares:
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=_process_main, args=(plan.target, share, theirs), daemon=True)
            proc.start()
            theirs.close()
            pipes.append(ours)
            procs.append(proc)
        ready_by = time.monotonic() + READY_TIMEOUT_S
        for pipe in pipes:
            message = _receive(pipe, ready_by)
            if message != "ready":
                raise RuntimeError(f"load generator could not connect: {message}")
        start_s = time.monotonic() + START_DELAY_S
        for pipe in pipes:
            pipe.send((start_s, plan.warmup_s, plan.duration_s))
        window_start = start_s + plan.warmup_s
        window_end = window_start + plan.duration_s
        probe_delta = None
        if probe is not None:
            time.sleep(max(0.0, window_start - time.monotonic()))
            before = probe()
            time.sleep(max(0.0, window_end - time.monotonic()))
            after = probe()
            probe_delta = tuple(b - a for a, b in zip(before, after, strict=True))
        results: list[WindowSamples] = []
        for pipe in pipes:
            message = _receive(pipe, window_end + RESULT_GRACE_S)
            if not isinstance(message, WindowSamples):
                raise RuntimeError(f"load generator failed: {message}")
            results.append(message)
        finished = True
    finally:
        for worker in procs:
            # After a failure or Ctrl-C, do not wait for a worker to reach the end of its window.
            worker.join(timeout=5.0 if finished else 0.0)
            if worker.is_alive():
                worker.kill()
                worker.join(timeout=5.0)
        for pipe in pipes:
            pipe.close()
    return summarize(results, plan.concurrency, plan.duration_s, plan.target.stream, probe_delta)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="mock-model")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per level")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--processes", type=int, default=1, help="load generator processes")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("refusing to generate load against a non-loopback host")
    if not 0 < args.duration <= 600 or not 0 <= args.warmup <= 60 or not 1 <= args.processes <= 8:
        sys.exit("--duration must be ≤ 600 s, --warmup ≤ 60 s, --processes 1–8")
    if any(not 1 <= c <= 1024 for c in args.concurrency):
        sys.exit("--concurrency levels must be 1–1024")
    target = Target.chat(args.host, args.port, args.model, args.stream, args.api_key)
    for concurrency in args.concurrency:
        plan = LoadPlan(target, concurrency, args.duration, args.warmup, args.processes)
        print(describe(run_load(plan)), flush=True)


if __name__ == "__main__":
    main()
