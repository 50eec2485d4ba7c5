"""`gateway router fit --outcomes FILE.jsonl --out DIR` and `gateway router eval --outcomes
FILE --router DIR`: a router fitted to one organisation's judged outcomes, and its quality."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.cli.classifier_commands import (
    CHARS_PER_TOKEN,
    STRONG_USD_PER_MTOK,
    WEAK_USD_PER_MTOK,
)

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    import numpy as np


BOOTSTRAP_DRAWS = 1000

_outcomes_option = click.option(
    "--outcomes", "outcomes_path", required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help='JSON lines {"prompt", "weak_score", "strong_score"} (higher is better)')


@click.group()
def router() -> None:
    """Fit a router to your own judged outcomes, and measure it."""


@router.command("fit")
@_outcomes_option
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path,
              file_okay=False), help="directory to write the router into")
def fit(outcomes_path: Path, out_dir: Path) -> None:
    """Fit the router on the outcomes and write it to DIR (router.json)."""
    from gateway.tools.router_fit import (
        OutcomesError,
        fit_router,
        load_outcomes_file,
        write_router,
    )

    try:
        document = fit_router(load_outcomes_file(outcomes_path))
    except OutcomesError as exc:
        raise click.ClickException(str(exc)) from None
    path = write_router(document, out_dir)
    training = document["training"]
    click.echo(f"fitted on {training['outcomes']} outcomes (strong model better on"
               f" {training['strong_won']}); wrote {path}")


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
    from gateway.tools.routing_metrics import report_router

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
        low, high = _bootstrap(scores, weak, strong)
        click.echo(f"{name:8} {report.apgr:6.3f}  [{low:.3f}, {high:.3f}]"
                   f"  {report.calls_to_95:12.1%}  {report.cost_saved:10.1%}")


def _bootstrap(scores: np.ndarray, weak: np.ndarray, strong: np.ndarray,
               ) -> tuple[float, float]:
    import numpy as np

    from gateway.tools.routing_metrics import apgr, routing_curve

    rng = np.random.default_rng(0)
    values = []
    for _ in range(BOOTSTRAP_DRAWS):
        pick = rng.integers(0, len(scores), len(scores))
        if strong[pick].mean() > weak[pick].mean():  # PGR is undefined otherwise
            values.append(apgr(routing_curve(scores[pick], weak[pick], strong[pick])))
    if not values:
        return float("nan"), float("nan")
    low, high = np.quantile(values, [0.05, 0.95])
    return float(low), float(high)
