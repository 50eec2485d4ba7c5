"""`gateway report`: cost, economics, savings and audit reports from the audit tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gateway.cli.database import Database, run_with_database
from gateway.cli.time_range import period, since_option, until_option
from gateway.errors import InvalidRequest
from gateway.reports.render import Format, ReportTable, render

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from sqlalchemy.ext.asyncio import AsyncEngine

    from gateway.deployments.repository import DeclaredGpus
    from gateway.policy.loader import PolicySet
    from gateway.reports.build import (
        Scope,
    )
    from gateway.reports.periods import Period
    from gateway.reports.rollup_repository import Dimension

if TYPE_CHECKING:
    Work = Callable[[AsyncEngine, Scope], Awaitable[ReportTable]]


@click.group()
def report() -> None:
    """Reports over the audit log: as a table, CSV or JSON (and an HTML page)."""


def _common(command: Callable[..., None]) -> Callable[..., None]:
    """The options every report takes."""
    for option in reversed((
        since_option(),
        until_option(),
        click.option("--tenant", default=None, help="only this tenant (by name)"),
        click.option("--format", "fmt", type=click.Choice([f.value for f in Format]),
                     default=Format.TABLE.value, show_default=True),
        click.option("--database-url", default=None,
                     help="default: GATEWAY_DATABASE_URL, or the embedded database"),
    )):
        command = option(command)
    return command


def _by(kind: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option("--by", default=None,
                        type=click.Choice(["tenant", "model", "backend", "rule", "day"]),
                        help=f"group the {kind} report by this (default: tenant)")


def _produce(options: dict[str, Any], work: Work) -> None:
    """Open the database, resolve the tenant, run the report, print it."""
    from gateway.reports.build import Scope


    async def main(db: Database) -> ReportTable:
        scope = Scope(None, None, datetime.now(UTC))
        if options["tenant"] is not None:
            row = await db.tenants.get_tenant(options["tenant"])
            if row is None:
                raise click.ClickException(f"no tenant named {options['tenant']!r}")
            scope = Scope(row.id, row.name, scope.now)
        return await work(db.engine, scope)

    try:
        table = run_with_database(main, database_url=options["database_url"],
                                  read_only=True)
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None
    click.echo(render(table, Format(options["fmt"])), nl=False)


POLICY_OPTION = click.option(
    "--policy", "policy_path", type=click.Path(path_type=Path), default=None,
    help="policy YAML with the GPU costs (default: GATEWAY_POLICY_PATH); GPU-hours are charged "
    "from the deployments the gateway recorded, this file only fills in ones it never ran")


@report.command("cost")
@_common
@_by("cost")
@POLICY_OPTION
def cost(**options: Any) -> None:
    """Spend and tokens by tenant, model, backend, rule or day (from the daily rollups): API
    spend as recorded, self-hosted GPU-hours paid shared by tokens, idle GPUs on their own
    line."""
    from gateway.reports.build import cost_report

    by = _dimension("cost", options["by"])
    period = _checked_period(options)
    declared = _declared(options["policy_path"])
    _produce(options, lambda engine, scope: cost_report(engine, period, scope, by, declared))


@report.command("savings")
@_common
@_by("savings")
@POLICY_OPTION
def savings(**options: Any) -> None:
    """Cost (API spend + GPU-hours paid) against the baseline model's, the share served
    self-hosted and by APIs, and sensitive requests kept at home."""
    from gateway.reports.build import savings_report

    by = _dimension("savings", options["by"])
    period = _checked_period(options)
    declared = _declared(options["policy_path"])
    _produce(options, lambda engine, scope: savings_report(engine, period, scope, by,
                                                            declared))


@report.command("economics")
@_common
@click.option("--by", default=None, type=click.Choice(["backend"]),
              help="economics is always per backend")
@POLICY_OPTION
def economics(policy_path: Path | None, **options: Any) -> None:
    """Per backend: tokens, throughput, tokens per GPU-hour, effective $ per 1K tokens,
    latency and TTFT percentiles, KV-cache hit rate and busy share of the GPUs paid for."""
    from gateway.reports.build import economics_report
    from gateway.reports.gpus import declared_gpus
    from gateway.settings import Settings

    period = _checked_period(options)
    policy = _policy(policy_path or Settings().policy_path)
    declared = declared_gpus(policy)
    zones = {name: b.zone for name, b in policy.backends.items()}
    _produce(options, lambda engine, scope: economics_report(engine, period, scope, declared,
                                                              zones))


@report.command("audit")
@_common
@click.option("--backend", default=None, help="only requests served by this backend")
@click.option("--model", default=None, help="only requests for this (requested) model")
@click.option("--rule", default=None, help="only requests this rule decided")
@click.option("--outcome", default=None, help="only this outcome (ok, error, ...)")
@click.option("--limit", type=int, default=None,
              help="rows per page (default: 100)")
@click.option("--cursor", default=None, help="the next_cursor of the previous page")
def audit(**options: Any) -> None:
    """The audit rows themselves, newest first, a page at a time."""
    from gateway.reports.audit_rows import DEFAULT_LIMIT, AuditQuery, Cursor, check_limit
    from gateway.reports.build import audit_report

    period = _checked_period(options)
    try:
        query = AuditQuery(
            period, None, options["backend"], options["model"], options["rule"],
            options["outcome"], check_limit(options["limit"] or DEFAULT_LIMIT),
            Cursor.decode(options["cursor"]) if options["cursor"] else None,
        )
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None
    _produce(options, lambda engine, scope: audit_report(engine, query, scope))


@report.command("routes")
@_common
def routes(**options: Any) -> None:
    """The route mix by task type: per task (code, math, chat, ...), the requests each backend
    and zone served, their share of the task, mean p_strong and cost (read from the audit
    log itself: suits days and weeks)."""
    from gateway.reports.build import routes_report

    period = _checked_period(options)
    _produce(options, lambda engine, scope: routes_report(engine, period, scope))


@report.command("apis")
@_common
def apis(**options: Any) -> None:
    """Traffic by entry point (chat, completions, embeddings, messages, responses): requests,
    errors, tokens and cost per API the clients called (read from the audit log itself)."""
    from gateway.reports.build import apis_report

    period = _checked_period(options)
    _produce(options, lambda engine, scope: apis_report(engine, period, scope))


def _checked_period(options: dict[str, Any]) -> Period:
    return period(options["since"], options["until"])


def _dimension(kind: str, by: str | None) -> Dimension:
    from gateway.reports.build import dimension

    try:
        found = dimension(kind, by)
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint="--by") from None
    assert found is not None  # every grouped report has a default
    return found


def policy_or_none(path: Path | None) -> PolicySet | None:
    """The policy named, or the default one; a missing default file is no error (the
    gateway's own record of deployments is what the reports charge)."""
    from gateway.settings import Settings

    if path is None:
        path = Settings().policy_path
        if not path.exists():
            return None
    return _policy(path)


def _declared(path: Path | None) -> list[DeclaredGpus]:
    from gateway.reports.gpus import declared_gpus

    policy = policy_or_none(path)
    return declared_gpus(policy) if policy is not None else []


def _policy(path: Path) -> PolicySet:
    from gateway.policy.loader import PolicyError, load_policy

    try:
        return load_policy(path)
    except PolicyError as exc:
        problems = "\n".join(str(p) for p in exc.problems)
        raise click.ClickException(f"the policy {path} does not validate:\n{problems}") from None
