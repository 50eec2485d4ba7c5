"""Audit ingest while serving: a gateway with its audit in Postgres serves a steady load; a
second process pushes events through the gateway's own AuditWriter (same batching, same
transaction with the rollups) as fast as it takes them. Measured: the writer's sustained
rows/s, and the gateway's req/s and latency with and without that insert load beside it.

Run through `python benchmarks/audit.py --part ingest` (it prints the table).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import orjson
from load_result import describe
from loadgen import LoadPlan, Target, run_load
from services import LOOPBACK, GatewaySetup, free_port, start_mock
from sqlalchemy import func, select
from tables import render_text

from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from gateway.types import AuditEvent, Rejection, RejectionKind, TelemetryNote

BENCH_DIR = Path(__file__).resolve().parent
POLICY_PATH = BENCH_DIR / "overhead-policy.yaml"
CONCURRENCY = 8
BACKLOG_TARGET = 5_000  # events kept queued: the writer is never idle for want of work


def synthetic_event(n: int, now: float) -> AuditEvent:
    """A realistic row: a decision trace, telemetry and sensitivity like a routed request."""
    return AuditEvent(
        request_id=f"bench-{uuid.uuid4().hex}", ts_unix_s=now, tenant_id=f"t{n % 50}",
        key_id=f"k{n % 200}", endpoint="chat.completions", requested_model="auto",
        backend=("llama-8b", "qwen-32b", "gpt-frontier")[n % 3], upstream_model="m",
        rule=f"rule-{n % 8}", status=200, error_type=None, prompt_tokens=800 + n % 3000,
        completion_tokens=50 + n % 500, cached_tokens=0, cost_micro_usd=120 + n % 900,
        duration_s=0.4 + (n % 2000) / 1000, ttft_s=0.05 + (n % 300) / 1000, attempts=1,
        stream=n % 2 == 0, outcome="ok",
        rejected=(Rejection("gpt-frontier", "quality tier above what is needed",
                            RejectionKind.QUALITY_TIER),),
        predicted_ttft_s=0.1, predicted_cost_micro_usd=150, tenant_name=f"tenant-{n % 50}",
        zone="self_hosted", complexity="low", p_strong=0.2,
        sensitivity=("pii",) if n % 10 == 0 else (), max_output_tokens=512,
        baseline_cost_micro_usd=5000, tried=("llama-8b",),
        telemetry=TelemetryNote(running=4, waiting=0, kv_usage=0.35, prefix_hit_rate=0.4,
                                in_flight=3, age_s=0.4),
    )


async def inject(url: str, seconds: float, spool_dir: Path) -> dict[str, float]:
    engine = create_engine(url)
    writer = AuditWriter(AuditRepository(engine), Spool(spool_dir), chain_id="bench-injector")
    await writer.start()
    started = time.monotonic()
    recorded = 0
    while time.monotonic() - started < seconds:
        now = time.time()
        while writer.backlog < BACKLOG_TARGET:
            writer.record(synthetic_event(recorded, now))
            recorded += 1
        await asyncio.sleep(0.01)
    await writer.stop()  # drains what is still queued
    elapsed = time.monotonic() - started
    async with engine.connect() as conn:
        stored = await conn.scalar(select(func.count()).select_from(audit_log)
                                   .where(audit_log.c.chain_id == "bench-injector"))
    await engine.dispose()
    return {"recorded": recorded, "stored": int(stored or 0), "seconds": elapsed,
            "spooled": writer.stats.rows_spooled}


def _load(port: int, key: str, seconds: float) -> list[str]:
    target = Target.chat(LOOPBACK, port, "bench", stream=False, api_key=key)
    result = run_load(LoadPlan(target, CONCURRENCY, seconds, warmup_s=2.0))
    return describe(result).split("\n")


def ingest_part(args: argparse.Namespace) -> None:
    from audit_synthetic import fresh_database

    asyncio.run(fresh_database(args.database_url))
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-audit-")))
        mock_port = free_port()
        stack.enter_context(start_mock(mock_port, work, 8, 5.0))
        setup = GatewaySetup.create(work, work / "policy.yaml", mock_port)
        setup.env["GATEWAY_DATABASE_URL"] = args.database_url
        setup.env["GATEWAY_AUDIT_SPOOL_DIR"] = str(work / "spool")
        key = setup.create_key("bench")
        port = free_port()
        gateway = stack.enter_context(setup.start_gateway(port, 1))
        print(f"gateway (pid {gateway.pid}) on :{port}, audit to Postgres", flush=True)
        alone = _load(port, key, args.seconds)
        injector = subprocess.Popen(
            [sys.executable, __file__, "--inject", args.database_url, str(args.seconds + 4),
             str(work / "injector-spool")],
            stdout=subprocess.PIPE, cwd=BENCH_DIR,
        )
        time.sleep(2.0)  # the injector's writer is at full speed before the window opens
        beside = _load(port, key, args.seconds)
        out, _ = injector.communicate(timeout=args.seconds + 120)
        numbers = orjson.loads(out.splitlines()[-1])
    rate = numbers["stored"] / numbers["seconds"]
    print(f"\ninjector: {numbers['recorded']:,} events recorded, {numbers['stored']:,} rows "
          f"stored in {numbers['seconds']:.1f} s → {rate:,.0f} rows/s sustained "
          f"(batches of 500, each with its rollup upserts, one transaction)\n")
    print(render_text(["gateway load (c=8, non-streaming)", "result"],
                      [["alone", alone[0]], ["beside the injector", beside[0]]]))


if __name__ == "__main__" and sys.argv[1:2] == ["--inject"]:
    url, seconds, spool = sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
    print(orjson.dumps(asyncio.run(inject(url, seconds, spool))).decode())
