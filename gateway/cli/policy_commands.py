"""`gateway policy check FILE...`, schema export, explain, and replay over the audit log."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
import orjson

from gateway.cli.time_range import period, since_option, until_option
from gateway.types import ROUTED_ENDPOINTS, Endpoint  # light: the explain option needs them

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from sqlalchemy.ext.asyncio import AsyncEngine

    from gateway.audit.range_repository import AuditRange
    from gateway.offline.replay.replay_report import ReplayReport
    from gateway.offline.replay.router_replay import RouterReplay
    from gateway.policy.loader import PolicySet


@click.group()
def policy() -> None:
    """Validate and inspect routing policies."""


@policy.command("check")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def check(files: tuple[Path, ...]) -> None:
    """Validate policy files; print every problem with file, line and key; exit 1 on any."""
    from gateway.policy.loader import PolicyError, load_policy

    failed = False
    for path in files:
        try:
            loaded = load_policy(path)
        except PolicyError as exc:
            failed = True
            for problem in exc.problems:
                click.echo(str(problem), err=True)
            continue
        click.echo(f"{path}: ok ({len(loaded.backends)} backends, "
                   f"models: {', '.join(loaded.public_models())})")
    if failed:
        raise SystemExit(1)


@policy.command("schema")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None)
def schema(output: Path | None) -> None:
    """Print (or write) the JSON Schema of policy files, for editors."""
    from gateway.policy.schema import PolicyFile

    text = json.dumps(PolicyFile.model_json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)


@policy.command("explain")
@click.option("--policy", "policy_path", default=None, type=click.Path(path_type=Path),
              help="default: GATEWAY_POLICY_PATH, else the demo policy shipped with the package")
@click.option("--tenant", default="demo", show_default=True)
@click.option("--request", "request_path", required=True, type=click.Path(path_type=Path),
              help="a request body as JSON (e.g. a chat completion with model and messages); "
              "- reads it from stdin")
@click.option("--endpoint", type=click.Choice([e.value for e in ROUTED_ENDPOINTS]),
              default=Endpoint.CHAT.value, show_default=True)
@click.option("--tags", default=None, help="comma-separated, as in x-gateway-tags")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def explain_command(policy_path: Path | None, tenant: str, request_path: Path, endpoint: str,
                    tags: str | None, as_json: bool) -> None:
    """Show which backend a request would get, by which rule, and why the others were not."""
    from gateway.api.parsing import parse_route_request
    from gateway.classify.standard import standard_classifier
    from gateway.classify.task_type import TaskModelError
    from gateway.errors import GatewayError
    from gateway.policy.loader import PolicyError, load_policy
    from gateway.routing.explain import explain, render_table
    from gateway.settings import Settings
    from gateway.types import TenantContext

    try:
        loaded = load_policy(policy_path or Settings().policy_path)
    except PolicyError as exc:
        raise click.ClickException(f"the policy does not validate:\n{exc}") from None
    try:
        body = sys.stdin.buffer.read() if str(request_path) == "-" else request_path.read_bytes()
        route_request = parse_route_request(body, Endpoint(endpoint), "explain", tags)
    except (OSError, GatewayError) as exc:
        raise click.ClickException(f"{request_path}: {exc}") from None
    context = TenantContext(tenant_id=tenant, tenant_name=tenant, key_id="-")
    try:
        classifier = standard_classifier(task_model=Settings().task_model)
    except TaskModelError as exc:
        raise click.ClickException(str(exc)) from None
    result = asyncio.run(explain(classifier, loaded, context, route_request))
    if as_json:
        click.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render_table(result))


LEAK_EXIT_STATUS = 3  # sensitive requests would leave self_hosted without redaction


@policy.command("replay")
@click.option("--policy", "policy_path", required=True, type=click.Path(path_type=Path),
              help="the new policy to re-decide recorded requests under")
@since_option()
@until_option()
@click.option("--tenant", default=None, help="only this tenant (its id or its name)")
@click.option("--database-url", default=None,
              help="the audit database; default GATEWAY_DATABASE_URL (or the embedded file)")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@click.option("--progress/--no-progress", default=None,
              help="progress on stderr; default: when stderr is a terminal")
@click.option("--page-rows", type=click.IntRange(min=1), default=5000, show_default=True,
              help="audit rows read per query")
@click.option("--router", "router_dir", default=None,
              type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="a router (`gateway router fit`) to estimate difficulty with instead of the "
              "recorded one, where the prompt was stored; adds the quality it would have had "
              "on shadow-judged requests")
def replay_command(policy_path: Path, since: str | None, until: str | None, tenant: str | None,
                   database_url: str | None, fmt: str, progress: bool | None,
                   page_rows: int, router_dir: Path | None) -> None:
    """Re-decide recorded requests under a new policy and report what would change: traffic
    moved between backends, cost, predicted TTFT, refusals, every sensitive request that
    would leave the self_hosted zone without redaction, and the GPUs (and their monthly cost)
    each self-hosted deployment would need for the busiest minute before and after.

    The fleet is empty during the replay (policies are compared, not moments). Exit status:
    0 when no sensitive request would leave self_hosted unredacted, 3 when any would (so CI
    can gate a policy change on it), 1 when the policy does not validate or the database
    cannot be read, 2 on bad options.
    """
    from gateway.audit.range_repository import AuditRange
    from gateway.cli.database import run_with_database
    from gateway.offline.planning.replay_capacity import (
        capacity_changes,
        capacity_json,
        capacity_lines,
    )
    from gateway.offline.replay.replay_table import render_table
    from gateway.policy.loader import PolicyError, load_policy

    try:
        loaded = load_policy(policy_path)
    except PolicyError as exc:
        raise click.ClickException(f"the policy does not validate:\n{exc}") from None
    rescoring = _router_replay(loaded, router_dir) if router_dir is not None else None
    chosen = period(since, until)
    span = AuditRange(chosen.since, chosen.until, tenant)
    err = sys.stderr
    show = err.isatty() if progress is None else progress
    report = run_with_database(
        lambda db: _replay(loaded, str(policy_path), span, db.engine, page_rows, show,
                           rescoring),
        database_url=database_url, read_only=True)
    minutes = max(1, round((chosen.until - chosen.since).total_seconds() / 60))
    capacity = capacity_changes(loaded, report.loads, minutes)
    if fmt == "json":
        body = {**report.to_json(), "capacity": capacity_json(capacity)}
        if rescoring is not None:
            body["router"] = {"path": str(router_dir), **rescoring.summary()}
        click.echo(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    else:
        click.echo(render_table(report) + "\n\n" + "\n".join(capacity_lines(capacity)))
        if rescoring is not None:
            click.echo("\n" + "\n".join(rescoring.lines(str(router_dir))))
    if show:
        click.echo(f"{report.rows_read} rows replayed at {report.rows_per_s:,.0f} rows/s",
                   err=True)
    if report.leaks:
        raise SystemExit(LEAK_EXIT_STATUS)


def _router_replay(loaded: PolicySet, router_dir: Path) -> RouterReplay:
    from gateway.classify.router_model import RouterModel, RouterModelError
    from gateway.offline.replay.router_replay import RouterReplay, strong_backend

    try:
        model = RouterModel.load(router_dir)
    except RouterModelError as exc:
        raise click.ClickException(str(exc)) from None
    strong = strong_backend(loaded.backends, loaded.shadow.strong if loaded.shadow else None)
    return RouterReplay(model, loaded.backends, strong, {})


async def _replay(loaded: PolicySet, name: str, span: AuditRange, engine: AsyncEngine,
                  page_rows: int, show: bool, rescoring: RouterReplay | None = None,
                  ) -> ReplayReport:
    """Stream the range page by page through the replayer, with a progress bar on stderr."""
    from gateway.audit.range_repository import count_rows, stream_pages
    from gateway.offline.replay.replay import COLUMNS, Replayer
    from gateway.outcomes.repository import prompts_and_judgements

    total = await count_rows(engine, span) if show else 0
    err = sys.stderr
    # Off a terminal click draws no bar, only its label: print a line per page instead.
    lines = show and not err.isatty()
    replayer = Replayer(loaded, observer=rescoring.observe if rescoring else None)
    with click.progressbar(length=total, label="replaying audit rows", file=err,
                           show_pos=True, hidden=not show or lines) as bar:
        done = 0
        async for page in stream_pages(engine, span, page_rows, COLUMNS):
            if rescoring is not None:
                prompts, rescoring.judged = await prompts_and_judgements(
                    engine, [row["request_id"] for row in page])
                page = rescoring.rescore(page, prompts)
            replayer.add(page)
            bar.update(len(page))
            done += len(page)
            if lines:
                click.echo(f"replayed {done}/{total} rows", err=True)
    return replayer.report(name, span.since.isoformat(), span.until.isoformat())
