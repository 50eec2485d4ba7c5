"""Soak: the full pipeline (budgets in Redis, audit to Postgres, engine telemetry scraped from
two simulated vLLM backends, the gateway's own /metrics read every window) under a steady
open-loop load for --minutes; every --window-s the gateway's RSS, open fds and the window's
latency are sampled. Targets (issue 9): RSS growth < 10 %, no fd growth, p99 stable, and no
audit row lost. Definitions are in benchmarks/soak_report.py and printed with the results.

The load: a seeded mix of streaming and non-streaming chat completions, Poisson arrivals at
--load-fraction of the capacity a short closed-loop probe measures first (or at --rate).

--database-url is a SCRATCH Postgres database: its public schema is dropped and migrated.
The benchmark tenant's budget keys are deleted from --redis-url afterwards.

  python benchmarks/soak.py --database-url postgresql+asyncpg://postgres@127.0.0.1:55432/gw_soak \\
      --redis-url redis://127.0.0.1:56379/10 --minutes 10
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import uvloop
from audit_synthetic import fresh_database
from machine import Machine, describe_machine
from overhead import check_gateway
from services import (
    ADMIN_KEY,
    BENCH_DIR,
    LOOPBACK,
    Budgets,
    forget_budget_keys,
    free_port,
    http_call,
)
from soak_load import OpenLoop, Requests
from soak_report import Ledger, WindowRow, render
from soak_rig import (
    MAX_TOKENS,
    TENANT,
    VIRTUAL_MODEL,
    fd_kinds,
    gateway_setup,
    read_tree,
    spooled_files,
    start_sims,
)
from sqlalchemy import func, select

from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine

WARMUP_WINDOWS = 1
IDLE_SETTLE_S = 8.0  # longer than httpx's 5 s keep-alive expiry: idle upstream sockets close


@dataclass(frozen=True, slots=True)
class Options:
    database_url: str
    redis_url: str
    minutes: float
    window_s: float
    workers: int
    rate: float | None
    load_fraction: float
    stream_share: float
    probe_s: float
    probe_concurrency: int
    markdown_out: Path | None


def parse_args(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="scratch Postgres (postgresql+asyncpg://...): schema dropped")
    parser.add_argument("--redis-url", required=True, help="Redis for budgets")
    parser.add_argument("--minutes", type=float, default=10.0, help="soak length")
    parser.add_argument("--window-s", type=float, default=None,
                        help="sampling window (default 30 s, or a quarter of a shorter soak, "
                        "so a smoke run still has windows to compare)")
    parser.add_argument("--workers", type=int, default=1, help="gateway uvicorn workers")
    parser.add_argument("--rate", type=float, default=None,
                        help="requests/s (default: --load-fraction × the probed capacity)")
    parser.add_argument("--load-fraction", type=float, default=0.6)
    parser.add_argument("--stream-share", type=float, default=0.5)
    parser.add_argument("--probe-s", type=float, default=10.0)
    parser.add_argument("--probe-concurrency", type=int, default=48)
    parser.add_argument("--markdown-out", type=Path, help="write a RESULTS.md section here")
    a = parser.parse_args(argv)
    if not a.database_url.startswith("postgresql"):
        parser.error("--database-url must be Postgres (the audit path under test)")
    if a.window_s is None:
        a.window_s = min(30.0, a.minutes * 60 / 4)
    if not 0.5 <= a.minutes <= 120 or not 5 <= a.window_s <= 300:
        parser.error("--minutes must be 0.5–120 and --window-s 5–300")
    if not 1 <= a.workers <= 8 or not 0.05 <= a.load_fraction <= 1 or not 0 <= a.stream_share <= 1:
        parser.error("--workers 1–8, --load-fraction 0.05–1, --stream-share 0–1")
    if a.rate is not None and not 1 <= a.rate <= 5000:
        parser.error("--rate must be 1–5000 requests/s")
    if not 2 <= a.probe_s <= 60 or not 1 <= a.probe_concurrency <= 512:
        parser.error("--probe-s 2–60, --probe-concurrency 1–512")
    return Options(a.database_url, a.redis_url, a.minutes, a.window_s, a.workers, a.rate,
                   a.load_fraction, a.stream_share, a.probe_s, a.probe_concurrency,
                   a.markdown_out)


@dataclass(frozen=True, slots=True)
class Soaked:
    capacity_rps: float
    rate_rps: float
    rows: list[WindowRow]
    answered: int
    unanswered: int
    idle_fds_before: int
    idle_fds_after: int
    idle_kinds: tuple[str, str]  # fds by kind, idle before and after the load
    metrics_failures: int  # gateway /metrics reads that did not answer 200


async def _soak(options: Options, port: int, key: str, gateway_pid: int) -> Soaked:
    requests = Requests.build(LOOPBACK, port, VIRTUAL_MODEL, key, MAX_TOKENS)
    client = OpenLoop(LOOPBACK, port, requests, options.stream_share)
    capacity = await client.run_closed(options.probe_concurrency, options.probe_s)
    capacity_rps = capacity / options.probe_s
    rate = options.rate or max(1.0, options.load_fraction * capacity_rps)
    probe_failures = client.take_window().errors
    _progress(f"capacity probe: {capacity_rps:.1f} req/s at concurrency "
              f"{options.probe_concurrency} ({probe_failures} failed); soaking at {rate:.1f} req/s")
    client.close()
    await asyncio.sleep(IDLE_SETTLE_S)
    idle_before, kinds_before = read_tree(gateway_pid).fds, fd_kinds(gateway_pid)
    duration_s = options.minutes * 60
    loop = asyncio.get_running_loop()
    start = loop.time()
    load = loop.create_task(client.run_open(rate, duration_s))
    rows: list[WindowRow] = []
    metrics_failures = 0
    window_start = start
    while window_start + 1.0 < start + duration_s:
        window_end = min(window_start + options.window_s, start + duration_s)
        await asyncio.sleep(max(0.0, window_end - loop.time()))
        finished = client.take_window()
        tree = read_tree(gateway_pid)
        # What a Prometheus scrape of the gateway would do, once a window.
        reply = await asyncio.to_thread(http_call, port, "/metrics", None,
                                        {"authorization": f"Bearer {ADMIN_KEY}"})
        metrics_failures += reply.status != 200
        row = WindowRow.of(len(rows) + 1, loop.time() - start, loop.time() - window_start,
                           finished, tree)
        rows.append(row)
        _progress(f"window {row.index}: {row.rps:.1f} req/s, p50 {row.p50_ms:.0f} ms, "
                  f"p99 {row.p99_ms:.0f} ms, {row.errors} errors, RSS "
                  f"{tree.rss_kib / 1024:.1f} MiB, {tree.fds} fds, in flight {client.in_flight}")
        window_start = loop.time()
    await load  # stops sending at the end, then waits for what is still open
    tail = client.take_window()
    if tail.sent or tail.errors:
        _progress(f"after the last window: {tail.ok} finished, {tail.errors} failed")
    client.close()
    await asyncio.sleep(IDLE_SETTLE_S)
    idle_after, kinds_after = read_tree(gateway_pid).fds, fd_kinds(gateway_pid)
    return Soaked(capacity_rps, rate, rows, client.answered, client.unanswered, idle_before,
                  idle_after, (kinds_before, kinds_after), metrics_failures)


async def _audit_rows(url: str) -> int:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(audit_log)) or 0)
    finally:
        await engine.dispose()


def run(options: Options) -> tuple[Soaked, Ledger, int]:
    asyncio.run(fresh_database(options.database_url))
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-soak-")))
        ports = start_sims(stack, work)
        setup = gateway_setup(work, ports, options.database_url, options.redis_url)
        key = setup.create_key(TENANT)
        tenant_id = setup.tenant_id(TENANT)
        # Registered now, run last: whatever happens, the shared Redis keeps nothing of ours.
        stack.callback(lambda: _progress(
            f"deleted {forget_budget_keys(options.redis_url, tenant_id)} budget keys from Redis"))
        port = free_port()
        with setup.start_gateway(port, options.workers) as gateway:
            backend = check_gateway(port, key, VIRTUAL_MODEL, Budgets(options.redis_url))
            processes = read_tree(gateway.pid).processes
            _progress(f"gateway ({options.workers} worker(s), {processes} processes, pid "
                      f"{gateway.pid}) on :{port}; sims {ports}; first request → {backend}")
            soaked = uvloop.run(_soak(options, port, key, gateway.pid))
        # Stopped: the audit writer has drained its queue into Postgres (or the spool).
        rows = asyncio.run(_audit_rows(options.database_url))
        ledger = Ledger(answered=soaked.answered + 1, unanswered=soaked.unanswered,
                        audit_rows=rows, spooled_files=spooled_files(work),
                        idle_fds_before=soaked.idle_fds_before,
                        idle_fds_after=soaked.idle_fds_after,
                        idle_kinds_before=soaked.idle_kinds[0],
                        idle_kinds_after=soaked.idle_kinds[1])
    return soaked, ledger, processes


def _setup_text(options: Options, soaked: Soaked, processes: int) -> str:
    return (f"gateway: {options.workers} uvicorn worker(s) ({processes} processes sampled), "
            f"budgets on in Redis, audit to Postgres, telemetry scraped every 1 s from two "
            f"simulated vLLM backends (real-time, answers of 16–{MAX_TOKENS} tokens); load: "
            f"open-loop Poisson at {soaked.rate_rps:.1f} req/s = "
            f"{soaked.rate_rps / soaked.capacity_rps * 100:.0f} % of the {soaked.capacity_rps:.1f}"
            f" req/s a {options.probe_s:g} s closed-loop probe at concurrency "
            f"{options.probe_concurrency} reached, {options.stream_share * 100:.0f} % streaming; "
            f"{options.minutes:g} min in {options.window_s:g} s windows; window 1 is the "
            f"warm-up; gateway /metrics read once a window "
            f"({soaked.metrics_failures} reads failed)")


def report(options: Options, command: str, machine: Machine, loads: tuple[str, str],
           soaked: Soaked, ledger: Ledger, processes: int) -> None:
    setup = _setup_text(options, soaked, processes)
    print(f"\nSoak: {setup}\n{machine.summary()}; load average before {loads[0]}, "
          f"after {loads[1]}\n")
    print(render(soaked.rows, WARMUP_WINDOWS, ledger))
    if options.markdown_out:
        section = "\n".join([
            f"## Soak: {options.minutes:g} minutes of steady load through the full pipeline",
            "",
            f"{machine.date}, {machine.summary()}, {machine.python}, revision "
            f"`{machine.revision}`. Command:",
            "",
            f"    {command}",
            "",
            f"{setup}.",
            "",
            f"Load average (1, 5, 15 min) before the run: {loads[0]}; after: {loads[1]}.",
            "",
            render(soaked.rows, WARMUP_WINDOWS, ledger, markdown=True),
        ])
        options.markdown_out.write_text(section + "\n")
        print(f"\nmarkdown section written to {options.markdown_out}")


def _load_averages() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _terminate(signum: int, frame: FrameType | None) -> None:
    # Turn SIGTERM into an exception so that every `with` block stops its subprocess.
    raise SystemExit(128 + signum)


def main() -> int:
    options = parse_args(sys.argv[1:])
    command = shlex.join(["python", "benchmarks/soak.py", *sys.argv[1:]])
    signal.signal(signal.SIGTERM, _terminate)
    machine = describe_machine(BENCH_DIR.parent)  # before our own load raises the load average
    before = _load_averages()
    started = time.monotonic()
    try:
        soaked, ledger, processes = run(options)
    except KeyboardInterrupt:
        _progress("interrupted; subprocesses stopped")
        return 130
    except (RuntimeError, TimeoutError, OSError) as exc:
        _progress(f"soak benchmark failed: {exc}")
        return 1
    report(options, command, machine, (before, _load_averages()), soaked, ledger, processes)
    _progress(f"total time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
