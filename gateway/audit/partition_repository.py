"""Growth and retention of the audit log: monthly partitions of `audit_log` made ahead of
time in Postgres, and pruning by dropping whole partitions (SQLite deletes rows instead).

Rows whose month has no partition land in `audit_log_default`. Postgres refuses to create a
partition for a month the default partition already holds rows of, so a month is added as a
standalone table that takes over those rows and is then attached, in one transaction.

Prune removes request rows and opted-in content (`audit_content`, the most sensitive data)
older than the cutoff, and the heads of chains left without rows. It never touches the daily
rollups, latency histograms or busy minutes (reports over old months keep working; they hold
no request-level data), nor the admin chain (administrative actions are few and kept).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from sqlalchemy import delete, exists, func, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.db.audit_tables import audit_chains, audit_content, audit_log

log = logging.getLogger("gateway.audit")

DEFAULT_PARTITION = "audit_log_default"
MONTHS_AHEAD = 3
_BOUND = re.compile(r"FROM \('([^']+)'\) TO \('([^']+)'\)")


@dataclass(frozen=True, slots=True)
class Partition:
    name: str
    start: datetime | None  # None for the default partition
    end: datetime | None
    rows: int | None = None  # counted only when asked


@dataclass(frozen=True, slots=True)
class PruneResult:
    dropped: tuple[Partition, ...]  # whole partitions (Postgres)
    deleted_rows: int  # rows deleted one by one (the default partition, or SQLite)
    deleted_content: int
    deleted_heads: int
    dry_run: bool


def month_start(day: date, delta: int = 0) -> date:
    index = day.year * 12 + day.month - 1 + delta
    return date(index // 12, index % 12 + 1, 1)


def partition_name(month: date) -> str:
    return f"audit_log_y{month.year}m{month.month:02d}"


def _utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def is_postgres(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "postgresql"


async def list_partitions(conn: AsyncConnection, *, count_rows: bool = False) -> list[Partition]:
    """audit_log's partitions with their bounds, oldest first, the default partition last."""
    result = await conn.execute(text(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'audit_log'::regclass"
    ))
    found = []
    for name, bound in result:
        match = _BOUND.search(bound)
        start, end = (
            (datetime.fromisoformat(match[1]), datetime.fromisoformat(match[2])) if match
            else (None, None)
        )
        rows = None
        if count_rows:
            rows = await conn.scalar(text(f'SELECT count(*) FROM "{name}"'))
        found.append(Partition(name, start, end, rows))
    found.sort(key=lambda p: (p.start is None, p.start or datetime.min.replace(tzinfo=UTC)))
    return found


async def ensure_partitions(
    engine: AsyncEngine, months_ahead: int = MONTHS_AHEAD, today: date | None = None
) -> list[str]:
    """Make sure this month and the next `months_ahead` have partitions; returns the names
    created. A no-op on SQLite."""
    if not is_postgres(engine):
        return []
    this_month = month_start(today or datetime.now(UTC).date())
    created = []
    for delta in range(months_ahead + 1):
        start = month_start(this_month, delta)
        async with engine.begin() as conn:
            if await _add_month(conn, _utc(start), _utc(month_start(start, 1)),
                                partition_name(start)):
                created.append(partition_name(start))
    return created


async def _covered(conn: AsyncConnection, start: datetime, end: datetime) -> bool:
    return any(
        p.start is not None and p.end is not None and p.start < end and start < p.end
        for p in await list_partitions(conn)
    )


async def _add_month(conn: AsyncConnection, start: datetime, end: datetime, name: str) -> bool:
    if await _covered(conn, start, end):
        return False
    # No writer may put a row of this month into the default partition between the move and
    # the attach (the attach would then fail); wait for the lock only briefly. Holding it,
    # look again: another replica may have added the month meanwhile.
    await conn.execute(text("SET LOCAL lock_timeout = '10s'"))
    await conn.execute(text(f"LOCK TABLE {DEFAULT_PARTITION} IN ACCESS EXCLUSIVE MODE"))
    if await _covered(conn, start, end):
        return False
    await conn.execute(text(
        f'CREATE TABLE "{name}" (LIKE audit_log INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'
    ))
    bounds = {"start": start, "end": end}
    moved = await conn.execute(text(
        f'WITH moved AS (DELETE FROM {DEFAULT_PARTITION} WHERE ts >= :start AND ts < :end'
        f' RETURNING *) INSERT INTO "{name}" SELECT * FROM moved'
    ), bounds)
    # Bounds as literals: DDL takes no parameters. ISO with an explicit +00:00, so the
    # session's time zone cannot shift a month boundary.
    await conn.execute(text(
        f'ALTER TABLE audit_log ATTACH PARTITION "{name}" FOR VALUES'
        f" FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
    ))
    if moved.rowcount:
        log.info("partition %s took over %d rows from %s", name, moved.rowcount,
                 DEFAULT_PARTITION)
    return True


async def prune(engine: AsyncEngine, cutoff: datetime, *, dry_run: bool = False) -> PruneResult:
    """Remove the request log older than `cutoff`. In Postgres only whole months go (a month
    that straddles the cutoff stays until it is entirely older), and the default partition's
    older rows; in SQLite every row older than the cutoff."""
    # A chain whose newest row goes too keeps no head (it would read as cut off). Found
    # before the rows go, by the head's own row: a head whose row is already missing stays,
    # for `verify` to report.
    ended = (audit_chains.c.chain_id != "admin") & exists().where(
        audit_log.c.chain_id == audit_chains.c.chain_id,
        audit_log.c.seq == audit_chains.c.seq,
        audit_log.c.ts < cutoff,
    )
    async with engine.begin() as conn:
        if dry_run:
            heads = int(await conn.scalar(
                select(func.count()).select_from(audit_chains).where(ended)) or 0)
        else:
            heads = (await conn.execute(delete(audit_chains).where(ended))).rowcount
        dropped: list[Partition] = []
        if is_postgres(engine):
            for p in await list_partitions(conn):
                if p.end is not None and p.end <= cutoff:
                    rows = await conn.scalar(text(f'SELECT count(*) FROM "{p.name}"'))
                    dropped.append(Partition(p.name, p.start, p.end, rows))
                    if not dry_run:
                        await conn.execute(text(f'DROP TABLE "{p.name}"'))
            table_rows = text(f"SELECT count(*) FROM {DEFAULT_PARTITION} WHERE ts < :cutoff")
            delete_rows = text(f"DELETE FROM {DEFAULT_PARTITION} WHERE ts < :cutoff")
        else:
            table_rows = select(func.count()).select_from(audit_log).where(
                audit_log.c.ts < cutoff)
            delete_rows = delete(audit_log).where(audit_log.c.ts < cutoff)
        old_content = audit_content.c.ts < cutoff
        if dry_run:
            deleted = int(await conn.scalar(table_rows, {"cutoff": cutoff}) or 0)
            content = int(await conn.scalar(
                select(func.count()).select_from(audit_content).where(old_content)) or 0)
        else:
            deleted = (await conn.execute(delete_rows, {"cutoff": cutoff})).rowcount
            content = (await conn.execute(delete(audit_content).where(old_content))).rowcount
    return PruneResult(tuple(dropped), deleted, content, heads, dry_run)


async def keep_partitions_ahead(
    engine: AsyncEngine, months_ahead: int = MONTHS_AHEAD, interval_s: float = 86_400.0
) -> None:
    """Runs for the life of a Postgres-backed gateway: checks daily that the coming months
    have partitions. A failure is logged and tried again the next day (until then rows of an
    uncovered month land in the default partition, nothing is lost)."""
    while True:
        try:
            created = await ensure_partitions(engine, months_ahead)
            if created:
                log.info("created audit partitions %s", ", ".join(created))
        except (SQLAlchemyError, OSError):
            log.exception("could not create the coming months' audit partitions")
        await asyncio.sleep(interval_s)
