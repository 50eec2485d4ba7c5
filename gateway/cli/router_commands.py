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
from gateway.cli.extras import needs_train
from gateway.cli.time_range import SYNTAX, instant

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once

    from gateway.offline.training.router_fit import JudgedPrompt


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
@needs_train
def fit(outcomes_path: Path | None, from_audit: bool, tenant: str | None, since: str,
        strong_backend: str | None, database_url: str | None, out_dir: Path) -> None:
    """Fit the router on the outcomes and write it to DIR (router.json)."""
    from gateway.offline.training.router_fit import (
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
    from gateway.offline.training.audit_outcomes import AuditOutcomes, outcomes_from_audit

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
@needs_train
def evaluate(outcomes_path: Path, router_dir: Path) -> None:
    """APGR with its bootstrap 90 % interval, the share of strong calls that reaches 95 % of
    the strong model's quality, and the cost saved there (prompt tokens ≈ characters / 4,
    at one blended price per model), beside prompt length as a router."""
    import numpy as np

    from gateway.classify.router_model import RouterModel, RouterModelError
    from gateway.offline.evaluation.routing_metrics import apgr_interval, report_router
    from gateway.offline.training.router_fit import OutcomesError, load_outcomes_file

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


@router.command("calibrate")
@click.option("--prompts", "prompts_path", default=None,
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help='JSON lines {"prompt"} or {"messages": [...]}: traffic to calibrate on')
@click.option("--from-audit", is_flag=True,
              help="calibrate on recorded traffic: each audit row's p_strong and tokens")
@click.option("--tenant", default=None, help="with --from-audit: one tenant (name or id)")
@click.option("--since", default="7d", show_default=True,
              help=f"with --from-audit: rows since then ({SYNTAX})")
@click.option("--database-url", default=None,
              help="with --from-audit: default GATEWAY_DATABASE_URL (or the embedded file)")
@click.option("--router", "router_dir", default=None,
              type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="with --prompts: score with this fitted router instead of the shipped model")
@click.option("--shares", default="10,20,30,40,50", show_default=True,
              help="wanted shares of strong calls, in per cent")
@click.option("--output-tokens", default=256, show_default=True, type=click.IntRange(0),
              help="with --prompts: the reply length assumed for each prompt")
@click.option("--weak-usd-per-mtok", default=WEAK_USD_PER_MTOK, show_default=True,
              type=click.FloatRange(0))
@click.option("--strong-usd-per-mtok", default=STRONG_USD_PER_MTOK, show_default=True,
              type=click.FloatRange(0))
def calibrate(prompts_path: Path | None, from_audit: bool, tenant: str | None, since: str,
              database_url: str | None, router_dir: Path | None, shares: str,
              output_tokens: int, weak_usd_per_mtok: float,
              strong_usd_per_mtok: float) -> None:
    """For each wanted share of strong-model calls, the p_strong threshold that sends it
    (use it as `when: {p_strong: {gte: T}}`) and the cost of the traffic routed so, against
    sending all of it to the strong model. Prompt tokens from --prompts are estimated at
    four characters each; recorded traffic brings its own counts."""
    from gateway.offline.evaluation.router_calibration import Prices
    from gateway.offline.evaluation.router_calibration import calibrate as run_calibration

    if (prompts_path is None) == (not from_audit):
        raise click.UsageError("give either --prompts FILE or --from-audit")
    try:
        wanted = tuple(float(s) / 100 for s in shares.split(","))
    except ValueError:
        raise click.BadParameter("per cent values separated by commas, e.g. 10,20,30",
                                 param_hint="--shares") from None
    if not wanted or not all(0 < s <= 1 for s in wanted):
        raise click.BadParameter("each share must be above 0 and at most 100",
                                 param_hint="--shares")
    if from_audit:
        p, tokens, source = _recorded(tenant, instant(since, end=False, param="since"),
                                      database_url)
    else:
        assert prompts_path is not None
        p, tokens, source = _scored(prompts_path, router_dir, output_tokens)
    if not p:
        raise click.ClickException(f"no requests with a p_strong in {source}")
    rows = run_calibration(p, tokens, Prices(weak_usd_per_mtok, strong_usd_per_mtok), wanted)
    click.echo(f"{len(p)} requests from {source}; prices ${weak_usd_per_mtok}/M weak,"
               f" ${strong_usd_per_mtok}/M strong")
    click.echo(f"{'share':>6} {'p_strong >=':>12} {'strong calls':>13} {'cost':>12}"
               f" {'saved':>7}")
    for row in rows:
        click.echo(f"{row.share:6.0%} {row.threshold:12.4f} {row.strong_calls:13,}"
                   f" {'$' + format(row.cost_usd, ',.4f'):>12} {row.saved:7.1%}")


def _scored(path: Path, router_dir: Path | None,
            output_tokens: int) -> tuple[list[float], list[int], str]:
    import orjson

    from gateway.classify.complexity_encoder import EncoderModelError
    from gateway.classify.router_model import RouterModel, RouterModelError
    from gateway.classify.standard import load_complexity
    from gateway.settings import Settings

    settings = Settings()
    try:
        model = (RouterModel.load(router_dir) if router_dir is not None
                 else load_complexity(settings.complexity_model, settings.encoder_table))
    except (RouterModelError, EncoderModelError) as exc:
        raise click.ClickException(str(exc)) from None
    p: list[float] = []
    tokens: list[int] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise click.ClickException(f"{path}:{number}: not JSON ({exc})") from None
            text = _prompt_text(item)
            if text is None:
                raise click.ClickException(f'{path}:{number}: needs "prompt" (a string) or'
                                           ' "messages" (a list of {"role", "content"})')
            p.append(model.p_strong(text))
            tokens.append(max(1, len(text) // CHARS_PER_TOKEN) + output_tokens)
    return p, tokens, str(path)


def _prompt_text(item: object) -> str | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("prompt"), str):
        return str(item["prompt"])
    messages = item.get("messages")
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        users = [m.get("content") for m in messages if m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return str(users[-1])  # the question being asked, as the gateway scores it
    return None


def _recorded(tenant: str | None, since: datetime,
              database_url: str | None) -> tuple[list[float], list[int], str]:
    from datetime import UTC

    from gateway.audit.range_repository import AuditRange, stream_pages
    from gateway.cli.database import Database, run_with_database

    async def read(db: Database) -> tuple[list[float], list[int]]:
        tenant_id = None
        if tenant is not None:
            row = await db.tenants.get_tenant(tenant)
            tenant_id = row.id if row else tenant
        span = AuditRange(since, datetime.now(UTC), tenant_id)
        p: list[float] = []
        tokens: list[int] = []
        columns = ("p_strong", "prompt_tokens", "completion_tokens")
        async for page in stream_pages(db.engine, span, columns=columns):
            for row in page:
                if row["p_strong"] is not None:
                    p.append(float(row["p_strong"]))
                    tokens.append(int(row["prompt_tokens"] or 0)
                                  + int(row["completion_tokens"] or 0))
        return p, tokens

    p, tokens = run_with_database(read, database_url=database_url, read_only=True)
    who = f"tenant {tenant}" if tenant else "all tenants"
    return p, tokens, f"the audit log ({who}, since {since:%Y-%m-%d %H:%M} UTC)"
