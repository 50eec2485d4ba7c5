"""`gateway router fit --outcomes FILE.jsonl --out DIR` (or `--from-audit --tenant T [--since
30d]`: the outcomes the gateway stored itself) and `gateway router eval --outcomes FILE
--router DIR`: a router fitted to one organisation's judged outcomes, and its quality."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.cli.classifier_commands import (
    CHARS_PER_TOKEN,
    STRONG_USD_PER_MTOK,
    WEAK_USD_PER_MTOK,
)
from gateway.cli.time_range import SYNTAX, instant

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once

    from gateway.tools.router_fit import JudgedPrompt


BOOTSTRAP_DRAWS = 1000

_outcomes_option = click.option(
    "--outcomes", "outcomes_path", required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help='JSON lines {"prompt", "weak_score", "strong_score"} (higher is better)')


@click.group()
def router() -> None:
    """Fit a router to your own judged outcomes, and measure it."""


@router.command("fit")
@click.option("--outcomes", "outcomes_path", default=None,
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help='JSON lines {"prompt", "weak_score", "strong_score"} (higher is better)')
@click.option("--from-audit", is_flag=True,
              help="fit on the outcomes the gateway stored itself (feedback and shadow "
              "judgements) for --tenant; prompts come from its stored content")
@click.option("--tenant", default=None, help="with --from-audit: the tenant (name or id)")
@click.option("--since", default="30d", show_default=True,
              help=f"with --from-audit: outcomes since then ({SYNTAX})")
@click.option("--strong", "strong_backend", default=None,
              help="with --from-audit: the backend whose answers count as the strong side of "
              "feedback (default: the strong backend of the shadow judgements)")
@click.option("--database-url", default=None,
              help="with --from-audit: default GATEWAY_DATABASE_URL (or the embedded file)")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path,
              file_okay=False), help="directory to write the router into")
def fit(outcomes_path: Path | None, from_audit: bool, tenant: str | None, since: str,
        strong_backend: str | None, database_url: str | None, out_dir: Path) -> None:
    """Fit the router on the outcomes and write it to DIR (router.json)."""
    from gateway.tools.router_fit import (
        OutcomesError,
        fit_router,
        load_outcomes_file,
        write_router,
    )

    if (outcomes_path is None) == (not from_audit):
        raise click.UsageError("give either --outcomes FILE or --from-audit --tenant T")
    try:
        if from_audit:
            if tenant is None:
                raise click.UsageError("--from-audit needs --tenant")
            outcomes = _audit_outcomes(tenant, instant(since, end=False, param="since"),
                                       strong_backend, database_url)
        else:
            assert outcomes_path is not None
            outcomes = load_outcomes_file(outcomes_path)
        document = fit_router(outcomes)
    except OutcomesError as exc:
        raise click.ClickException(str(exc)) from None
    path = write_router(document, out_dir)
    training = document["training"]
    click.echo(f"fitted on {training['outcomes']} outcomes (strong model better on"
               f" {training['strong_won']}); wrote {path}")


def _audit_outcomes(tenant: str, since: datetime, strong_backend: str | None,
                    database_url: str | None) -> list[JudgedPrompt]:
    from gateway.cli.database import Database, run_with_database
    from gateway.tools.audit_outcomes import AuditOutcomes, outcomes_from_audit

    async def read(db: Database) -> AuditOutcomes:
        row = await db.tenants.get_tenant(tenant)
        return await outcomes_from_audit(db.engine, row.id if row else tenant, since,
                                         strong_backend)

    found = run_with_database(read, database_url=database_url, read_only=True)
    click.echo(f"{len(found.prompts)} judged prompts from the audit (strong backend"
               f" {found.strong_backend or 'unknown'}): {found.from_shadow} shadow-judged,"
               f" {found.from_feedback} from feedback alone; {found.without_prompt} without a"
               f" stored prompt, {found.unusable} unusable")
    return found.prompts


@router.command("eval")
@_outcomes_option
@click.option("--router", "router_dir", required=True,
              type=click.Path(path_type=Path, exists=True, file_okay=False))
def evaluate(outcomes_path: Path, router_dir: Path) -> None:
    """APGR with its bootstrap 90 % interval, the share of strong calls that reaches 95 % of
    the strong model's quality, and the cost saved there (prompt tokens ≈ characters / 4,
    at one blended price per model), beside prompt length as a router."""
    import numpy as np

    from gateway.classify.router_model import RouterModel, RouterModelError
    from gateway.tools.router_fit import OutcomesError, load_outcomes_file
    from gateway.tools.routing_metrics import apgr_interval, report_router

    try:
        outcomes = load_outcomes_file(outcomes_path)
        model = RouterModel.load(router_dir)
    except (OutcomesError, RouterModelError) as exc:
        raise click.ClickException(str(exc)) from None
    weak = np.array([o.weak_score for o in outcomes])
    strong = np.array([o.strong_score for o in outcomes])
    if strong.mean() <= weak.mean():
        raise click.ClickException("the strong model is not better on these outcomes on"
                                   " average: APGR is undefined")
    tokens = np.array([max(1, len(o.prompt) // CHARS_PER_TOKEN) for o in outcomes])
    routers = {
        "router": np.array([model.p_strong(o.prompt) for o in outcomes]),
        "length": np.array([float(len(o.prompt)) for o in outcomes]),
    }
    click.echo(f"{len(outcomes)} outcomes; weak mean {weak.mean():.3f}, strong mean"
               f" {strong.mean():.3f}")
    click.echo(f"{'router':8} {'APGR':>6}  {'90% CI':>15}  {'calls to 95%':>12}"
               f"  {'cost saved':>10}")
    for name, scores in routers.items():
        report = report_router(scores, weak, strong, tokens, WEAK_USD_PER_MTOK,
                               STRONG_USD_PER_MTOK)
        low, high = apgr_interval(scores, weak, strong, BOOTSTRAP_DRAWS)
        click.echo(f"{name:8} {report.apgr:6.3f}  [{low:.3f}, {high:.3f}]"
                   f"  {report.calls_to_95:12.1%}  {report.cost_saved:10.1%}")
