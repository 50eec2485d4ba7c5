"""The audit write-ahead journal's cost and its replay rate.

record:  AuditWriter.record() in-process, journal off and on, on realistic events: CPU per
         call (the journal adds one orjson line and one write(2); the row and its hash link
         are made here in both cases, where before the journal they were made in the batch
         task a moment later: moved, not added).
gateway: two real `gateway serve` processes (Postgres audit, one worker each) in front of the
         mock upstream, journal off and on (GATEWAY_AUDIT_JOURNAL), closed loops of 1 and 16
         clients in alternating windows: median p50, p99 and gateway CPU per request.
replay:  a journal of --replay-rows rows as a SIGKILLed gateway leaves it, replayed into
         Postgres by a fresh writer (the path a restart takes): rows/s.

Run through `python benchmarks/audit.py --part journal` (it prints the tables).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from audit_ingest import synthetic_event
from loadgen import LoadPlan, Target, run_load
from process_cpu import tree_cpu_s
from services import LOOPBACK, GatewaySetup, free_port, start_mock
from sqlalchemy import func, select
from tables import render_text

from gateway.audit.journal import Journal
from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine

RECORD_CALLS = 20_000
LEVELS = (1, 16)


class NullSink:
    async def insert(self, rows: list[dict[str, object]]) -> int:
        return len(rows)


async def _record_cost(journal: bool, work: Path) -> float:
    """CPU µs per record() call, the batch task kept idle (its work is not on this path)."""
    writer = AuditWriter(NullSink(), Spool(work), interval_s=3600, batch_size=10**9,
                         journal=Journal() if journal else None)
    await writer.start()
    now = time.time()
    events = [synthetic_event(n, now) for n in range(RECORD_CALLS)]
    started = time.process_time()
    for event in events:
        writer.record(event)
    spent = time.process_time() - started
    await writer.stop()
    return spent / RECORD_CALLS * 1e6


def record_part() -> list[list[str]]:
    table = []
    with tempfile.TemporaryDirectory(prefix="gw-journal-") as tmp:
        off = min(asyncio.run(_record_cost(False, Path(tmp) / f"off{i}")) for i in range(3))
        on = min(asyncio.run(_record_cost(True, Path(tmp) / f"on{i}")) for i in range(3))
    table.append(["record(): row + hash link, journal off", f"{off:.1f}"])
    table.append(["record(): row + hash link + journal write(2)", f"{on:.1f}"])
    table.append(["added by the journal", f"{on - off:.1f}"])
    return table


ROUNDS = 5


def _window(port: int, key: str, concurrency: int, seconds: float,
            gateway_pid: int) -> tuple[float, float, float, float]:
    """(req/s, p50 ms, p99 ms, gateway CPU µs per request) of one measured window."""
    target = Target.chat(LOOPBACK, port, "bench", stream=False, api_key=key)
    result = run_load(LoadPlan(target, concurrency, seconds, warmup_s=1.0),
                      probe=lambda: (tree_cpu_s(gateway_pid),))
    assert result.latency is not None and result.probe_delta is not None
    cpu_us = result.probe_delta[0] / max(1, result.ok) * 1e6
    return result.rps, result.latency.p50_ms, result.latency.p99_ms, cpu_us


def gateway_part(database_url: str, seconds: float) -> list[list[str]]:
    """Both gateways run side by side and their windows alternate (off, on, off, on, ...),
    so a neighbour's load on a shared machine falls on both alike; medians of the rounds."""
    from audit_synthetic import fresh_database

    asyncio.run(fresh_database(database_url))
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-jrnl-")))
        mock_port = free_port()
        stack.enter_context(start_mock(mock_port, work, 8, 5.0))
        gateways: dict[str, tuple[int, int]] = {}
        services = {}
        key = ""
        for journal in ("false", "true"):
            (work / journal).mkdir()
            setup = GatewaySetup.create(work / journal, work / "policy.yaml", mock_port)
            setup.env["GATEWAY_DATABASE_URL"] = database_url
            setup.env["GATEWAY_AUDIT_SPOOL_DIR"] = str(work / journal / "spool")
            setup.env["GATEWAY_AUDIT_JOURNAL"] = journal
            key = key or setup.create_key("bench")
            port = free_port()
            services[journal] = stack.enter_context(setup.start_gateway(port, 1))
            gateways[journal] = (port, services[journal].pid)
        samples: dict[tuple[str, int], list[tuple[float, float, float, float]]] = {}
        for round_ in range(ROUNDS):
            for level in LEVELS:
                for journal, (port, pid) in gateways.items():
                    try:
                        found = _window(port, key, level, seconds, pid)
                    except RuntimeError:
                        print(f"gateway journal={journal}:\n{services[journal].log_tail()}")
                        raise
                    samples.setdefault((journal, level), []).append(found)
                    print(f"  round {round_ + 1} journal={journal} c={level}: "
                          f"{found[0]:,.0f} req/s p50 {found[1]:.2f} ms", flush=True)
    rows = []
    for level in LEVELS:
        for journal in gateways:
            runs = samples[(journal, level)]
            rps, p50, p99, cpu = (statistics.median(r[i] for r in runs) for i in range(4))
            rows.append([f"journal {'on' if journal == 'true' else 'off'}", str(level),
                         f"{rps:,.0f}", f"{p50:.2f}", f"{p99:.2f}", f"{cpu:,.0f}"])
    return rows


async def _replay_rate(database_url: str, count: int, work: Path) -> tuple[int, float]:
    from audit_synthetic import fresh_database

    await fresh_database(database_url)
    # The journal as a killed process leaves it: linked rows, whole lines, no lock held.
    directory = work / "spool" / "0"
    directory.mkdir(parents=True)
    journal = Journal(rotate_bytes=1 << 62)
    journal.open(directory)
    chain = Chain("bench-killed")
    now = time.time()
    for n in range(count):
        journal.append(chain.link(event_row(synthetic_event(n, now))))
    await journal.close(all_stored=False)
    engine = create_engine(database_url)
    writer = AuditWriter(AuditRepository(engine), Spool(work / "spool"), interval_s=0.05)
    started = time.perf_counter()
    await writer.start()
    while True:  # polled: replay reports progress only through its counters
        if writer.stats.rows_written >= count:
            break
        await asyncio.sleep(0.01)
    elapsed = time.perf_counter() - started
    await writer.stop()
    async with engine.connect() as conn:
        stored = await conn.scalar(select(func.count()).select_from(audit_log)
                                   .where(audit_log.c.chain_id == "bench-killed"))
    await engine.dispose()
    return int(stored or 0), elapsed


def replay_part(database_url: str, count: int) -> list[list[str]]:
    work = Path(tempfile.mkdtemp(prefix="gw-replay-"))
    try:
        stored, elapsed = asyncio.run(_replay_rate(database_url, count, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [[f"{count:,} journalled rows → Postgres", f"{stored:,}", f"{elapsed:.2f}",
             f"{stored / elapsed:,.0f}"]]


def journal_part(args: argparse.Namespace) -> None:
    if args.journal_gateway_only:
        print(render_text(["gateway", "clients", "req/s", "p50 ms", "p99 ms", "CPU µs/req"],
                          gateway_part(args.database_url, args.seconds)))
        return
    print(render_text(["record() path (20,000 calls, best of 3)", "CPU µs per call"],
                      record_part()))
    print()
    print(render_text(["replay after a kill", "rows stored", "s", "rows/s"],
                      replay_part(args.database_url, args.replay_rows)))
    print()
    print(render_text([f"gateway (Postgres audit, 1 worker), median of {ROUNDS}", "clients",
                       "req/s", "p50 ms", "p99 ms", "gateway CPU µs/req"],
                      gateway_part(args.database_url, args.seconds)))
