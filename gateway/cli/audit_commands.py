"""`gateway audit verify|prune|partitions|quarantine`: checking the hash chains, retention,
the monthly partitions of the audit log, and the rows the database refused."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from gateway.cli.database import run_with_database
from gateway.cli.time_range import SYNTAX, instant, since_option, until_option

if TYPE_CHECKING:  # loaded when a command runs: usage errors answer at once
    from sqlalchemy.ext.asyncio import AsyncEngine

    from gateway.audit.journal_check import Unwritten
    from gateway.audit.partition_repository import (
        PruneResult,
    )
    from gateway.audit.quarantine import (
        Entry,
    )
    from gateway.audit.verify import Break, Gap, VerifyReport

T = TypeVar("T")

DATABASE_URL = click.option(
    "--database-url", default=None, help="default: GATEWAY_DATABASE_URL (or the embedded file)"
)
QUARANTINE = click.option(
    "--quarantine", "quarantine_file", type=click.Path(dir_okay=False, path_type=Path),
    default=None, help="the quarantine file; default: quarantine.jsonl in the audit spool "
                       "directory (GATEWAY_AUDIT_SPOOL_DIR)",
)


def _quarantine_file(given: Path | None) -> Path:
    from gateway.audit.quarantine import quarantine_path
    from gateway.settings import Settings

    return given if given is not None else quarantine_path(Settings().spool_dir)


def parse_moment(value: str) -> datetime:
    """A moment as every command takes it (cli/time_range.py); a bare date is its start."""
    return instant(value, end=False, param="since")


def parse_cutoff(value: str, now: datetime) -> datetime:
    """`90d` / `12w` / `24h` (that long before now), an ISO date or date-time, or 'today'."""
    return instant(value, end=False, param="older-than", now=now)


def _run(database_url: str | None, work: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    return run_with_database(lambda db: work(db.engine), database_url=database_url,
                             read_only=True)


def _when(ts_us: int | None) -> str:
    from gateway.audit.records import ts_datetime

    return "-" if ts_us is None else ts_datetime(ts_us).isoformat()


def _gap(gap: Gap, path: Path) -> str:
    rows = f"seq {gap.first}" if gap.first == gap.last else f"seqs {gap.first}..{gap.last}"
    return (f"chain {gap.chain_id} {rows}: not in the database: quarantined (see {path})")


def _unwritten(item: Unwritten) -> str:
    row = item.row
    return (f"chain {row['chain_id']} seq {row['seq']} request {row.get('request_id')} at "
            f"{_when(row.get('ts'))}: only in {item.path}")


def describe(broken: Break) -> str:
    request = f" request {broken.request_id}" if broken.request_id else ""
    return (f"chain {broken.chain_id} seq {broken.seq}{request} at {_when(broken.ts_us)}:"
            f" {broken.problem}")


@click.group()
def audit() -> None:
    """Verify the audit log's hash chains, prune old rows, manage monthly partitions."""


@audit.command("verify")
@since_option("the first row")
@until_option("the last row")
@click.option("--journal", "journal_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="the audit spool directory whose journal and spool files are "
                                 "checked against the database; default: "
                                 "GATEWAY_AUDIT_SPOOL_DIR (or its default)")
@QUARANTINE
@DATABASE_URL
def verify(since: str | None, until: str | None, journal_dir: Path | None,
           quarantine_file: Path | None, database_url: str | None) -> None:
    """Check every row's hash and link in a time range, and each chain's end against its
    recorded head. Exits 1 and names the first broken link if anything was altered,
    deleted or reordered. Rows the database refused leave gaps that the quarantine file
    fills: those are listed, and the exit status is 3 if they are all that is missing.
    Rows a local journal or spool holds that the database lacks, left by a gateway that is
    not running, give exit status 4 (start a gateway on that directory: it replays them)."""
    from gateway.audit.chain_repository import verify_range
    from gateway.audit.journal_check import unwritten
    from gateway.audit.quarantine import read_quarantine
    from gateway.settings import Settings

    start = instant(since, end=False, param="since") if since else None
    end = instant(until, end=True, param="until") if until else None
    path = _quarantine_file(quarantine_file)
    journal = journal_dir if journal_dir is not None else Settings().spool_dir
    held = {e.key: e.row for e in read_quarantine(path) if e.intact}

    async def work(engine: AsyncEngine) -> tuple[VerifyReport, list[Unwritten]]:
        report = await verify_range(engine, start, end, quarantined=held)
        return report, await unwritten(engine, journal, held.keys())

    report, missing = _run(database_url, work)
    for gap in report.gaps:
        click.echo(f"quarantined: {_gap(gap, path)}")
    lost = [m for m in missing if not m.live]
    pending = len(missing) - len(lost)
    if pending:
        click.echo(f"pending: {pending} rows in the journal of a running gateway are not in "
                   f"the database yet ({journal})")
    for item in lost:
        click.echo(f"NOT IN DATABASE: {_unwritten(item)}")
    first = report.first
    if first is None:
        click.echo(f"ok: {report.rows} rows in {report.chains} chains verified")
        if lost:
            click.echo(f"{len(lost)} rows a stopped gateway journalled are not in the "
                       f"database; start a gateway with GATEWAY_AUDIT_SPOOL_DIR={journal} to "
                       "replay them", err=True)
            raise SystemExit(4)
        if report.gaps:
            missing = sum(g.last - g.first + 1 for g in report.gaps)
            click.echo(f"{missing} rows are not in the database but in the quarantine file "
                       f"{path} (gateway audit quarantine)", err=True)
            raise SystemExit(3)
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
              help=f"rows before this are removed: {SYNTAX}")
@click.option("--dry-run", is_flag=True, help="say what would be removed, remove nothing")
@DATABASE_URL
def prune_command(older_than: str, dry_run: bool, database_url: str | None) -> None:
    """Remove request rows and stored content older than the cutoff. Postgres drops whole
    monthly partitions (a month straddling the cutoff stays until all of it is older);
    daily rollups and the admin log are kept."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog
    from gateway.audit.partition_repository import prune

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
              help="first create partitions for this month and N ahead (a running gateway "
                   "keeps some ahead on its own)")
@DATABASE_URL
def partitions_command(ensure_ahead: int | None, database_url: str | None) -> None:
    """List audit_log's monthly partitions (Postgres) with their bounds and row counts."""
    from gateway.audit.partition_repository import ensure_partitions, is_postgres, list_partitions


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


@audit.command("quarantine")
@click.option("--retry", is_flag=True,
              help="insert the rows still waiting again (once their cause is fixed)")
@QUARANTINE
@DATABASE_URL
def quarantine_command(retry: bool, quarantine_file: Path | None,
                       database_url: str | None) -> None:
    """List the audit rows the database refused, kept in the quarantine file beside the
    spool. --retry inserts those still waiting (exits 1 if any is refused again)."""
    from gateway.audit.quarantine import read_quarantine

    path = _quarantine_file(quarantine_file)
    entries = read_quarantine(path)
    waiting = [e for e in entries if not e.stored]
    if not retry:
        for entry in entries:
            state = "stored" if entry.stored else "waiting"
            click.echo(f"{state}: {_entry(entry)}: {entry.error}")
        click.echo(f"{len(waiting)} waiting, {len(entries) - len(waiting)} stored ({path})")
        return
    failed = _run(database_url, lambda engine: _retry(engine, path, waiting))
    for entry in waiting:
        error = failed.get(entry.key)
        click.echo(f"refused again: {_entry(entry)}: {error}" if error
                   else f"stored: {_entry(entry)}")
    click.echo(f"{len(waiting) - len(failed)} stored, {len(failed)} still waiting ({path})")
    if failed:
        raise SystemExit(1)


async def _retry(engine: AsyncEngine, path: Path,
                 waiting: list[Entry]) -> dict[tuple[str, int], str]:
    """Insert each row on its own (one refusal must not hold the others back); an
    unavailable database ends the run, keeping what was stored so far."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog
    from gateway.audit.quarantine import QuarantineFile, refusal_message, refused
    from gateway.audit.repository import AuditRepository

    repository, stored, failed = AuditRepository(engine), [], {}
    try:
        for entry in waiting:
            try:
                await repository.insert([entry.row])
            except Exception as exc:
                if not refused(exc):
                    raise
                failed[entry.key] = refusal_message(exc)
            else:
                stored.append(entry.key)
    finally:
        if stored:
            await QuarantineFile(path).mark_stored(stored)
            await AdminLog(engine).record(cli_actor(), "audit.quarantine.retry", str(path), {
                "stored": [f"{c}:{s}" for c, s in stored]})
    return failed


def _entry(entry: Entry) -> str:
    row = entry.row
    return (f"chain {row.get('chain_id')} seq {row.get('seq')} request "
            f"{row.get('request_id')} at {_when(row.get('ts'))}")


def _bounds(start: datetime | None, end: datetime | None) -> str:
    if start is None or end is None:
        return "DEFAULT"
    return f"[{start.date()}, {end.date()})"

