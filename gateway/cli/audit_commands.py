"""`gateway audit verify|prune|partitions`: checking the hash chains, retention, and the
monthly partitions of the audit log."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import click
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.admin_log import AdminLog, cli_actor
from gateway.audit.partitions import (
    MONTHS_AHEAD,
    PruneResult,
    ensure_partitions,
    is_postgres,
    list_partitions,
    prune,
)
from gateway.audit.records import ts_datetime
from gateway.audit.verify import Break
from gateway.audit.verify_reading import verify_range
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.settings import Settings

T = TypeVar("T")
_AGE = re.compile(r"^(\d+)([dw])$")

DATABASE_URL = click.option(
    "--database-url", default=None, help="default: GATEWAY_DATABASE_URL (or the embedded file)"
)


def parse_moment(value: str) -> datetime:
    """An ISO date (midnight UTC) or date-time (UTC unless it says otherwise)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date or date-time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_cutoff(value: str, now: datetime) -> datetime:
    """`90d` / `12w` (that long before now) or an ISO date / date-time."""
    age = _AGE.match(value.strip())
    if age:
        days = int(age[1]) * (7 if age[2] == "w" else 1)
        return now - timedelta(days=days)
    return parse_moment(value)


def _run(database_url: str | None, work: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    async def main() -> T:
        settings = Settings()
        url = database_url or settings.database_url
        engine = create_engine(url)
        try:
            if url.startswith("sqlite"):
                await upgrade(engine)  # the embedded file migrates itself, as `serve` does
            return await work(engine)
        finally:
            await engine.dispose()

    return asyncio.run(main())


def _when(ts_us: int | None) -> str:
    return "-" if ts_us is None else ts_datetime(ts_us).isoformat()


def describe(broken: Break) -> str:
    request = f" request {broken.request_id}" if broken.request_id else ""
    return (f"chain {broken.chain_id} seq {broken.seq}{request} at {_when(broken.ts_us)}:"
            f" {broken.problem}")


@click.group()
def audit() -> None:
    """Verify the audit log's hash chains, prune old rows, manage monthly partitions."""


@audit.command("verify")
@click.option("--since", default=None, help="ISO date or date-time (UTC); default: the start")
@click.option("--until", default=None, help="ISO date or date-time, exclusive; default: now")
@DATABASE_URL
def verify(since: str | None, until: str | None, database_url: str | None) -> None:
    """Check every row's hash and link in a time range, and each chain's end against its
    recorded head. Exits 1 and names the first broken link if anything was altered,
    deleted or reordered."""
    start = parse_moment(since) if since else None
    end = parse_moment(until) if until else None
    report = _run(database_url, lambda engine: verify_range(engine, start, end))
    first = report.first
    if first is None:
        click.echo(f"ok: {report.rows} rows in {report.chains} chains verified")
        return
    click.echo(f"BROKEN: first broken link: {describe(first)}")
    for other in report.breaks:
        if other is not first:
            click.echo(f"also broken: {describe(other)}")
    click.echo(f"{len(report.breaks)} of {report.chains} chains broken "
               f"({report.rows} rows checked)", err=True)
    raise SystemExit(1)


@audit.command("prune")
@click.option("--older-than", "older_than", required=True,
              help="an age (90d, 12w) or an ISO date: rows before it are removed")
@click.option("--dry-run", is_flag=True, help="say what would be removed, remove nothing")
@DATABASE_URL
def prune_command(older_than: str, dry_run: bool, database_url: str | None) -> None:
    """Remove request rows and stored content older than the cutoff. Postgres drops whole
    monthly partitions (a month straddling the cutoff stays until all of it is older);
    daily rollups and the admin log are kept."""
    now = datetime.now(UTC)
    cutoff = parse_cutoff(older_than, now)
    if cutoff > now:
        raise click.BadParameter("the cutoff is in the future", param_hint="--older-than")

    async def work(engine: AsyncEngine) -> PruneResult:
        result = await prune(engine, cutoff, dry_run=dry_run)
        if not dry_run:
            await AdminLog(engine).record(cli_actor(), "audit.prune", "audit_log", {
                "cutoff": cutoff.isoformat(),
                "dropped": [p.name for p in result.dropped],
                "deleted_rows": result.deleted_rows,
            })
        return result

    result = _run(database_url, work)
    verb = "would remove" if dry_run else "removed"
    for p in result.dropped:
        drop = "would drop" if dry_run else "dropped"
        click.echo(f"{drop} partition {p.name} ({p.rows} rows, {_bounds(p.start, p.end)})")
    click.echo(f"{verb} {result.deleted_rows} older rows, {result.deleted_content} stored "
               f"contents, {result.deleted_heads} chain heads (cutoff {cutoff.isoformat()})")


@audit.command("partitions")
@click.option("--ensure-ahead", type=click.IntRange(0, 36), default=None,
              help=f"first create partitions for this month and N ahead (the gateway keeps "
                   f"{MONTHS_AHEAD})")
@DATABASE_URL
def partitions_command(ensure_ahead: int | None, database_url: str | None) -> None:
    """List audit_log's monthly partitions (Postgres) with their bounds and row counts."""

    async def work(engine: AsyncEngine) -> tuple[list[str], list[tuple[str, str, int | None]]]:
        if not is_postgres(engine):
            raise click.ClickException("partitions exist in Postgres only; SQLite keeps one "
                                       "table (prune deletes rows there)")
        created = [] if ensure_ahead is None else await ensure_partitions(engine, ensure_ahead)
        async with engine.connect() as conn:
            found = await list_partitions(conn, count_rows=True)
        return created, [(p.name, _bounds(p.start, p.end), p.rows) for p in found]

    created, found = _run(database_url, work)
    for name in created:
        click.echo(f"created {name}", err=True)
    for name, bounds, rows in found:
        click.echo(f"{name:<24} {bounds:<26} {rows} rows")


def _bounds(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return "DEFAULT"
    return f"[{start.date()}, {end.date()})"

