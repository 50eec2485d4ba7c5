"""`gateway report html --out FILE`: the /admin/reports page written to a file, read straight
from the database (no running gateway needed)."""

from __future__ import annotations

import errno
import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.cli.database import Database, run_with_database
from gateway.cli.report_commands import POLICY_OPTION, policy_or_none, report
from gateway.cli.time_range import since_option, until_option
from gateway.errors import InvalidRequest

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from gateway.policy.loader import PolicySet


def _render(database_url: str | None, since: date | None, until: date | None,
            tenant: str | None, policy: PolicySet | None) -> str:
    from gateway.reports.capacity_html import capacity_section
    from gateway.reports.gpus import declared_gpus
    from gateway.reports.html_page import render_page
    from gateway.reports.page_data import RangeError, load_page, report_range

    try:
        rng = report_range(since, until, tenant)
    except RangeError as exc:
        raise click.BadParameter(str(exc), param_hint="--since/--until") from None

    async def page(db: Database) -> str:
        declared = declared_gpus(policy) if policy is not None else []
        zones = {n: b.zone for n, b in policy.backends.items()} if policy is not None else {}
        data = await load_page(db.engine, rng, declared, zones)
        extra = []
        if policy is not None and rng.tenant is None:
            extra.append(await capacity_section(db.engine, policy,
                                                *rng.bounds(data.generated_at)))
        return render_page(data, extra)

    return run_with_database(page, database_url=database_url, read_only=True)


@report.command("html")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="the HTML file to write")
@since_option("29 days before --until; the page shows whole UTC days")
@until_option("today")
@click.option("--tenant", help="one tenant's name or id (default: all tenants)")
@click.option("--database-url", help="default: GATEWAY_DATABASE_URL, as `serve` uses")
@POLICY_OPTION
def html_report(out: Path, since: str | None, until: str | None, tenant: str | None,
                database_url: str | None, policy_path: Path | None) -> None:
    """The report page with charts (cost, route mix, latency, savings) as one HTML file."""
    from gateway.reports.periods import page_days

    try:
        first, last = page_days(since, until, datetime.now(UTC))
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None
    if not out.parent.is_dir():  # before the database: a wrong --out is the first thing to fix
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(out.parent))
    page = _render(database_url, first, last, tenant, policy_or_none(policy_path))
    # Written beside and renamed: a reader never sees half a page.
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    partial.write_text(page, encoding="utf-8")
    partial.replace(out)
    click.echo(f"wrote {out} ({len(page):,} bytes)")
