"""Economics and capacity over a large audit history: `gateway report economics`, `gateway
report html` and `gateway plan --from-audit`, each as a user runs it (the CLI in a fresh
process, start-up included) and in-process on a warm connection (what the admin API pays).

    python benchmarks/economics.py --database-url postgresql+asyncpg://postgres@127.0.0.1:55500/x
        [--rows 1000000] [--days 30] [--repeats 5] [--skip-generate]

Fills the database with --rows synthetic rows over --days days inside Postgres, folds them
into every rollup the writer keeps (benchmarks/audit_synthetic.py), declares the three
self-hosted backends' GPUs as of 45 days ago, then times each. The database named by
--database-url is emptied and migrated: point it at a scratch database. Target: each ≤ 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from audit_synthetic import fresh_database, generate
from machine import describe_machine
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from tables import render_text

from gateway.audit.partition_repository import ensure_partitions
from gateway.capacity.fleet_plan import DEFAULTS, plans
from gateway.capacity.observed import observed_loads
from gateway.db.engine import create_engine
from gateway.deployments.repository import DeploymentLog
from gateway.policy.loader import parse_policy
from gateway.reports.build import Scope, economics_report
from gateway.reports.capacity_html import capacity_section
from gateway.reports.gpus import declared_gpus
from gateway.reports.html_page import render_page
from gateway.reports.page_data import load_page, report_range
from gateway.reports.periods import parse_period

REPO = Path(__file__).resolve().parents[1]
POLICY = """\
version: 1
backends:
  - {name: llama-8b-a, provider: vllm, base_url: "http://127.0.0.1:9/v1",
     model: meta-llama/Llama-3.1-8B-Instruct, context_window: 131072,
     gpu: {type: L4, hourly_usd: 0.8, count: 1}}
  - {name: llama-8b-b, provider: vllm, base_url: "http://127.0.0.1:9/v1",
     model: meta-llama/Llama-3.1-8B-Instruct, context_window: 131072,
     gpu: {type: L4, hourly_usd: 0.8, count: 1}}
  - {name: qwen-32b, provider: vllm, base_url: "http://127.0.0.1:9/v1",
     model: Qwen/Qwen3-32B, context_window: 131072,
     gpu: {type: H100, hourly_usd: 4.5, count: 2}}
  - {name: gpt-mini, provider: openai, base_url: "https://api.example.com/v1",
     model: gpt-4o-mini, zone: external, context_window: 128000,
     price_per_mtok_usd: {input: 0.15, output: 0.6}}
  - {name: gpt-frontier, provider: openai, base_url: "https://api.example.com/v1",
     model: gpt-4o, zone: external, context_window: 128000,
     price_per_mtok_usd: {input: 2.5, output: 10.0}}
  - {name: claude, provider: anthropic, base_url: "https://api.example.com/v1",
     model: claude-sonnet, zone: external, context_window: 200000,
     price_per_mtok_usd: {input: 3.0, output: 15.0}}
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
"""


async def _timed(work: Callable[[], Awaitable[int]], repeats: int) -> tuple[int, list[float]]:
    answered = await work()  # warm: plan cache and buffers, as a running service has them
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        answered = await work()
        samples.append((time.perf_counter() - started) * 1000)
    return answered, sorted(samples)


async def in_process(engine: AsyncEngine, days: int, repeats: int) -> list[list[str]]:
    policy = parse_policy(POLICY)
    declared = declared_gpus(policy)
    zones = {n: b.zone for n, b in policy.backends.items()}
    now = datetime.now(UTC)
    period = parse_period(f"{days}d", None, now)
    start, end = period.day_bounds()
    end = min(end, now)

    async def economics() -> int:
        table = await economics_report(engine, period, Scope(None, None, now), declared, zones)
        return len(table.rows)

    async def html() -> int:
        rng = report_range(start.date(), (end - timedelta(microseconds=1)).date(), None)
        data = await load_page(engine, rng, declared, zones)
        capacity = await capacity_section(engine, policy, *rng.bounds(data.generated_at))
        return len(render_page(data, [capacity]))

    async def from_audit() -> int:
        async with engine.connect() as conn:
            loads = await observed_loads(conn, start, end)
        return len(plans(policy, loads, DEFAULTS, None))

    table = []
    for label, work, unit in (("report economics", economics, "rows"),
                              ("report html", html, "bytes"),
                              ("plan --from-audit", from_audit, "deployments")):
        answered, samples = await _timed(work, repeats)
        p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
        table.append([label, f"{answered:,} {unit}", str(repeats),
                      f"{statistics.median(samples):.0f}", f"{p95:.0f}"])
    return table


def as_a_user(url: str, days: int, repeats: int) -> list[list[str]]:
    """Each command in a fresh process, as typed: Python start-up and imports included."""
    gateway = str(Path(sys.executable).with_name("gateway"))
    with tempfile.TemporaryDirectory() as scratch:
        policy = Path(scratch) / "policy.yaml"
        policy.write_text(POLICY)
        since = (datetime.now(UTC).date() - timedelta(days=days)).isoformat()
        commands = {
            "gateway report economics": ["report", "economics", "--since", f"{days}d",
                                         "--policy", str(policy), "--database-url", url],
            "gateway report html": ["report", "html", "--out", f"{scratch}/r.html", "--since",
                                    since, "--policy", str(policy), "--database-url", url],
            "gateway plan --from-audit": ["plan", "--from-audit", "--since", f"{days}d",
                                          "--policy", str(policy), "--database-url", url],
            "gateway --help (start-up alone)": ["--help"],
        }
        env = {**os.environ, "GATEWAY_DATABASE_URL": url}
        table = []
        for label, args in commands.items():
            samples, cpu = [], []
            for _ in range(repeats):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                subprocess.run([gateway, *args], check=True, capture_output=True, env=env)
                samples.append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                # CPU the command itself used: what other work on the machine cannot inflate.
                cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            table.append([label, str(repeats), f"{statistics.median(samples):.2f}",
                          f"{max(samples):.2f}", f"{statistics.median(cpu):.2f}"])
    return table


async def prepare(url: str, rows: int, days: int) -> None:
    engine = create_engine(url)
    until = datetime.now(UTC).date()
    await fresh_database(url)
    first = until - timedelta(days=days)
    months = (until.year - first.year) * 12 + until.month - first.month + 1
    await ensure_partitions(engine, months_ahead=months, today=first)
    print(f"generating {rows:,} rows over {days} days ...", flush=True)
    timings = await generate(engine, rows, days, until)
    print(f"inserted in {timings['insert_s']:.0f} s, rollups built in "
          f"{timings['rollup_s']:.0f} s")
    declared_at = datetime.now(UTC) - timedelta(days=45)
    await DeploymentLog(engine).declare(declared_gpus(parse_policy(POLICY)), declared_at)
    await engine.dispose()


async def sizes(url: str) -> str:
    engine = create_engine(url)
    counts = []
    async with engine.connect() as conn:
        for table in ("audit_log", "audit_daily", "audit_latency", "backend_busy_minutes",
                      "backend_load_minutes", "audit_token_sizes"):
            n = await conn.scalar(text(f"SELECT count(*) FROM {table}"))
            counts.append(f"{table} {n:,}")
    await engine.dispose()
    return ", ".join(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-generate", action="store_true")
    args = parser.parse_args()
    machine = describe_machine(REPO)
    print(f"{machine.summary()} · load {machine.load_avg_1m:.1f} · {machine.date} · "
          f"{machine.revision}\n")
    if not args.skip_generate:
        asyncio.run(prepare(args.database_url, args.rows, args.days))
    print(asyncio.run(sizes(args.database_url)) + "\n")

    async def warm() -> list[list[str]]:
        engine = create_engine(args.database_url)
        try:
            return await in_process(engine, args.days, args.repeats)
        finally:
            await engine.dispose()

    print(render_text([f"in-process, {args.days} days", "answered", "runs", "p50 ms", "p95 ms"],
                      asyncio.run(warm())))
    print()
    print(render_text([f"CLI in a fresh process, {args.days} days", "runs", "median s",
                       "max s", "CPU s"], as_a_user(args.database_url, args.days, 3)))


if __name__ == "__main__":
    main()
