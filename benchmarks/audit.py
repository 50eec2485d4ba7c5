"""Audit at scale: how fast rows go in while the gateway serves, and how fast reports come
out of a long history.

    python benchmarks/audit.py --database-url postgresql+asyncpg://postgres@127.0.0.1:55432/bench
        [--part ingest|reports|journal|all] [--rows 10000000] [--days 90] [--seconds 20]

ingest:  a gateway (Postgres audit, one uvicorn worker) serves a steady closed-loop load while
         a second process pushes synthetic events through the same AuditWriter as fast as it
         accepts them. Reports the writer's sustained rows/s and the gateway's latency with
         and without that insert load beside it.
reports: fills the database with --rows synthetic rows over --days days (inside Postgres),
         folds them into the rollups, then times every report (p50/p95) against it.
journal: the write-ahead journal's cost per request (CPU, and p50 at 1 and 16 clients, journal
         off and on) and the replay rate after a kill (audit_journal.py).

The database named by --database-url is emptied and migrated: point it at a scratch database.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from audit_reports import time_queries
from audit_synthetic import fresh_database, generate
from machine import describe_machine
from sqlalchemy import text
from tables import render_text

from gateway.audit.partition_repository import ensure_partitions
from gateway.db.engine import create_engine

REPO = Path(__file__).resolve().parents[1]


async def reports_part(args: argparse.Namespace) -> None:
    engine = create_engine(args.database_url)
    until = datetime.now(UTC).date()
    if not args.skip_generate:
        await fresh_database(args.database_url)
        first = until - timedelta(days=args.days)
        months = (until.year - first.year) * 12 + until.month - first.month + 1
        await ensure_partitions(engine, months_ahead=months, today=first)
        print(f"generating {args.rows:,} rows over {args.days} days ...", flush=True)
        timings = await generate(engine, args.rows, args.days, until)
        print(f"inserted in {timings['insert_s']:.0f} s "
              f"({args.rows / timings['insert_s']:,.0f} rows/s in-database), "
              f"rollups built in {timings['rollup_s']:.0f} s")
    async with engine.connect() as conn:
        rows = await conn.scalar(text("SELECT count(*) FROM audit_log"))
        daily = await conn.scalar(text("SELECT count(*) FROM audit_daily"))
        size = await conn.scalar(text(
            "SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c"
            " WHERE c.relname LIKE 'audit_log%' AND c.relkind = 'r'"
        ))
    print(f"\n{rows:,} audit rows ({size} with indexes), {daily:,} rollup rows\n")
    table = await time_queries(engine, until, args.days, args.repeats, args.slow_repeats)
    print(render_text(["report over 90 days", "rows out", "runs", "p50 ms", "p95 ms"], table))
    await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--part", choices=["ingest", "reports", "journal", "all"], default="all")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--slow-repeats", type=int, default=3)
    parser.add_argument("--skip-generate", action="store_true",
                        help="time the reports against the rows already there")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--replay-rows", type=int, default=50_000)
    parser.add_argument("--journal-gateway-only", action="store_true",
                        help="with --part journal: only the gateway latency comparison")
    args = parser.parse_args()
    machine = describe_machine(REPO)
    print(f"{machine.summary()} · load {machine.load_avg_1m:.1f} · {machine.date} · "
          f"{machine.revision}\n")
    if args.part in ("ingest", "all"):
        from audit_ingest import ingest_part

        ingest_part(args)
    if args.part in ("reports", "all"):
        asyncio.run(reports_part(args))
    if args.part in ("journal", "all"):
        from audit_journal import journal_part

        journal_part(args)


if __name__ == "__main__":
    main()
