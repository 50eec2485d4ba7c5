"""`gateway report html --out FILE`: the /admin/reports page written to a file, read straight
from the database (no running gateway needed)."""

from __future__ import annotations

import asyncio
import os
from datetime import date, datetime
from pathlib import Path

import click

from gateway.cli.report_commands import POLICY_OPTION, policy_or_none, report
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.policy.loader import PolicySet
from gateway.reports.gpus import declared_gpus
from gateway.reports.html_page import render_page
from gateway.reports.page_data import RangeError, load_page, report_range
from gateway.settings import Settings
from gateway.tools.capacity_html import capacity_section

DAY = click.DateTime(formats=["%Y-%m-%d"])


async def _render(database_url: str, since: date | None, until: date | None,
                  tenant: str | None, policy: PolicySet | None) -> str:
    try:
        rng = report_range(since, until, tenant)
    except RangeError as exc:
        raise click.BadParameter(str(exc), param_hint="--since/--until") from None
    engine = create_engine(database_url)
    try:
        if database_url.startswith("sqlite"):
            await upgrade(engine)  # the embedded file migrates itself, as `serve` does
        declared = declared_gpus(policy) if policy is not None else []
        zones = {n: b.zone for n, b in policy.backends.items()} if policy is not None else {}
        data = await load_page(engine, rng, declared, zones)
        extra = []
        if policy is not None and rng.tenant is None:
            extra.append(await capacity_section(engine, policy, *rng.bounds(data.generated_at)))
        return render_page(data, extra)
    finally:
        await engine.dispose()


@report.command("html")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="the HTML file to write")
@click.option("--since", type=DAY, help="first UTC day (default: 29 days before --until)")
@click.option("--until", type=DAY, help="last UTC day, included (default: today)")
@click.option("--tenant", help="one tenant's name or id (default: all tenants)")
@click.option("--database-url", help="default: GATEWAY_DATABASE_URL, as `serve` uses")
@POLICY_OPTION
def html_report(out: Path, since: datetime | None, until: datetime | None, tenant: str | None,
                database_url: str | None, policy_path: Path | None) -> None:
    """The report page with charts (cost, route mix, latency, savings) as one HTML file."""
    page = asyncio.run(_render(
        database_url or Settings().database_url,
        since.date() if since else None, until.date() if until else None, tenant,
        policy_or_none(policy_path),
    ))
    # Written beside and renamed: a reader never sees half a page.
    partial = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    partial.write_text(page, encoding="utf-8")
    partial.replace(out)
    click.echo(f"wrote {out} ({len(page):,} bytes)")
