"""`gateway report html --out FILE`: the /admin/reports page written to a file, read straight
from the database (no running gateway needed)."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path

import click

from gateway.cli.database import Database, run_with_database
from gateway.cli.report_commands import report
from gateway.cli.time_range import since_option, until_option
from gateway.errors import InvalidRequest
from gateway.reports.html_page import render_page
from gateway.reports.page_data import RangeError, load_page, report_range
from gateway.reports.periods import page_days


def _render(database_url: str | None, since: date | None, until: date | None,
            tenant: str | None) -> str:
    try:
        rng = report_range(since, until, tenant)
    except RangeError as exc:
        raise click.BadParameter(str(exc), param_hint="--since/--until") from None

    async def page(db: Database) -> str:
        return render_page(await load_page(db.engine, rng))

    return run_with_database(page, database_url=database_url)


@report.command("html")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="the HTML file to write")
@since_option("29 days before --until; the page shows whole UTC days")
@until_option("today")
@click.option("--tenant", help="one tenant's name or id (default: all tenants)")
@click.option("--database-url", help="default: GATEWAY_DATABASE_URL, as `serve` uses")
def html_report(out: Path, since: str | None, until: str | None, tenant: str | None,
                database_url: str | None) -> None:
    """The report page with charts (cost, route mix, latency, savings) as one HTML file."""
    try:
        first, last = page_days(since, until, datetime.now(UTC))
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None
    page = _render(database_url, first, last, tenant)
    # Written beside and renamed: a reader never sees half a page.
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    partial.write_text(page, encoding="utf-8")
    partial.replace(out)
    click.echo(f"wrote {out} ({len(page):,} bytes)")
