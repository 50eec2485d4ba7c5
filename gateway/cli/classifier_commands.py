"""`gateway classifier train|eval`: the complexity model against RouteLLM's outcomes.

The `classifier` group is the extension point for the other classifiers' commands: their
modules add theirs with `@classifier.command(...)` (e.g. `eval-sensitivity`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.classify.complexity import DEFAULT_MODEL_PATH  # light: no numpy, no sklearn
from gateway.cli.extras import needs_train

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    import numpy as np

    from gateway.classify.complexity import ComplexityModel
    from gateway.offline.evaluation.routing_metrics import RouterReport
    from gateway.offline.training.complexity_train import (
        Outcome,
        Split,
    )


# Cost assumption for "cost saved": prompt tokens only, estimated as characters / 4 (English
# text), at one blended price per model; e.g. Mixtral-class $0.6/M vs GPT-4-class $10/M.
CHARS_PER_TOKEN = 4
WEAK_USD_PER_MTOK = 0.6
STRONG_USD_PER_MTOK = 10.0
RANDOM_ROUTER_DRAWS = 10


@dataclass(frozen=True, slots=True)
class TableRow:
    dataset: str
    router: str
    report: RouterReport


@click.group()
def classifier() -> None:
    """Train and evaluate the request classifiers."""


@classifier.command("train")
@click.option("--data", "data_root", required=True, type=click.Path(path_type=Path),
              help="data root holding routing/routellm_mmlu_gsm8k.jsonl")
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_MODEL_PATH,
              show_default=True, help="where to write the model JSON")
@click.option("--seed", default=0, show_default=True, type=int,
              help="seeds the held-out split (MMLU subjects, GSM8K rows)")
@needs_train
def train(data_root: Path, out: Path, seed: int) -> None:
    """Train the n-gram complexity model (one of the shipped model's signals) on the
    training split, write it, print held-out results."""
    from gateway.classify.complexity import ComplexityModel
    from gateway.offline.training.complexity_train import (
        TrainConfig,
        split_outcomes,
        train_model,
        write_model,
    )

    config = TrainConfig(seed=seed)
    split = split_outcomes(_load_or_exit(data_root), config)
    started = time.monotonic()
    document = train_model(split.train, config)
    document["training"]["heldout_subjects"] = list(split.heldout_subjects)
    write_model(document, out)
    click.echo(f"trained on {len(split.train)} prompts in {time.monotonic() - started:.1f}s;"
               f" wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
    click.echo(f"thresholds (50/30/20 %): {document['thresholds']}")
    _print_split(split)
    _print_table(_evaluate(ComplexityModel.from_document(document), split))


@classifier.command("eval")
@click.option("--data", "data_root", required=True, type=click.Path(path_type=Path),
              help="data root holding routing/routellm_mmlu_gsm8k.jsonl")
@click.option("--model", "model_path", type=click.Path(path_type=Path),
              default=DEFAULT_MODEL_PATH, show_default=True)
@needs_train
def evaluate(data_root: Path, model_path: Path) -> None:
    """APGR, calls to reach 95 % and cost saved on the model's held-out split, beside the
    length heuristic and random routing."""
    from gateway.classify.complexity import ComplexityModel, ComplexityModelError
    from gateway.offline.training.complexity_train import TrainConfig, split_outcomes

    try:
        model = ComplexityModel.load(model_path)
        training = json.loads(model_path.read_text(encoding="utf-8"))["training"]
    except (ComplexityModelError, KeyError) as exc:
        raise click.ClickException(f"cannot use model {model_path}: {exc}") from exc
    # Re-create the split the model was trained with, so "held-out" stays held out.
    seed = int(training["config"]["seed"])
    split = split_outcomes(_load_or_exit(data_root), TrainConfig(seed=seed))
    recorded = tuple(training.get("heldout_subjects", ()))
    if recorded and recorded != split.heldout_subjects:
        raise click.ClickException(
            "the data gives a different held-out split than the model was trained with;"
            " retrain with `gateway classifier train`"
        )
    _print_split(split)
    _print_table(_evaluate(model, split))


@classifier.command("crossval")
@click.option("--data", "data_root", required=True, type=click.Path(path_type=Path),
              help="data root holding routing/routellm_mmlu_gsm8k.jsonl")
@click.option("--seeds", default=5, show_default=True, type=click.IntRange(2, 50),
              help="held-out splits to train and evaluate, seeds 0..N-1")
@needs_train
def crossval(data_root: Path, seeds: int) -> None:
    """APGR over several held-out splits (each holding out different MMLU subjects), so one
    lucky or unlucky choice of subjects cannot decide the verdict. The model shipped is the
    seed-0 one; nothing is written here."""
    import numpy as np

    from gateway.classify.complexity import ComplexityModel
    from gateway.offline.training.complexity_train import TrainConfig, split_outcomes, train_model

    outcomes = _load_or_exit(data_root)
    results: dict[tuple[str, str], list[float]] = {}
    click.echo(f"{'seed':>4} {'data':16} {'complexity':>10} {'length':>8}")
    for seed in range(seeds):
        config = TrainConfig(seed=seed)
        split = split_outcomes(outcomes, config)
        model = ComplexityModel.from_document(train_model(split.train, config))
        table = _evaluate(model, split)
        for dataset in ("MMLU held-out", "GSM8K held-out"):
            apgr = {r.router: r.report.apgr for r in table if r.dataset == dataset}
            for router in ("complexity", "length"):
                results.setdefault((dataset, router), []).append(apgr[router])
            click.echo(f"{seed:4} {dataset:16} {apgr['complexity']:10.3f}"
                       f" {apgr['length']:8.3f}")
    click.echo(f"\nmean ± sd over {seeds} splits")
    for dataset in ("MMLU held-out", "GSM8K held-out"):
        ours, length = results[(dataset, "complexity")], results[(dataset, "length")]
        wins = sum(o > n for o, n in zip(ours, length, strict=True))
        click.echo(f"{dataset:16} complexity {np.mean(ours):.3f} ± {np.std(ours):.3f}"
                   f"   length {np.mean(length):.3f} ± {np.std(length):.3f}"
                   f"   complexity ahead on {wins}/{seeds}")


def _load_or_exit(data_root: Path) -> list[Outcome]:
    from gateway.offline.training.complexity_train import load_outcomes

    try:
        return load_outcomes(data_root)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc


def _evaluate(model: ComplexityModel, split: Split) -> list[TableRow]:
    import numpy as np

    routers: list[tuple[str, Callable[[Sequence[Outcome]], np.ndarray]]] = [
        ("complexity", lambda rows: np.array([model.p_strong(o.prompt) for o in rows])),
        ("length", lambda rows: np.array([float(len(o.prompt)) for o in rows])),
    ]
    table = []
    for name, rows in (("MMLU held-out", split.heldout_mmlu),
                       ("GSM8K held-out", split.heldout_gsm8k)):
        for router, scores in routers:
            table.append(TableRow(name, router, _report(scores(rows), rows)))
        table.append(TableRow(name, f"random (mean of {RANDOM_ROUTER_DRAWS})", _random(rows)))
    return table


def _report(scores: np.ndarray, rows: Sequence[Outcome]) -> RouterReport:
    import numpy as np

    from gateway.offline.evaluation.routing_metrics import report_router

    tokens = np.array([math.ceil(len(o.prompt) / CHARS_PER_TOKEN) for o in rows])
    return report_router(
        scores,
        np.array([o.weak_score for o in rows]),
        np.array([o.strong_score for o in rows]),
        tokens,
        WEAK_USD_PER_MTOK,
        STRONG_USD_PER_MTOK,
    )


def _random(rows: Sequence[Outcome]) -> RouterReport:
    import numpy as np

    from gateway.offline.evaluation.routing_metrics import RouterReport

    rng = np.random.default_rng(0)
    reports = [_report(rng.random(len(rows)), rows) for _ in range(RANDOM_ROUTER_DRAWS)]
    return RouterReport(
        apgr=float(np.mean([r.apgr for r in reports])),
        calls_to_95=float(np.mean([r.calls_to_95 for r in reports])),
        cost_saved=float(np.mean([r.cost_saved for r in reports])),
    )


def _print_split(split: Split) -> None:
    import numpy as np

    click.echo(f"held-out MMLU subjects ({len(split.heldout_subjects)}):"
               f" {', '.join(split.heldout_subjects)}")
    for name, rows in (("MMLU", split.heldout_mmlu), ("GSM8K", split.heldout_gsm8k)):
        weak = np.mean([o.weak_score for o in rows])
        strong = np.mean([o.strong_score for o in rows])
        click.echo(f"held-out {name}: {len(rows)} prompts, accuracy weak {weak:.3f},"
                   f" strong {strong:.3f}")


def _print_table(table: Sequence[TableRow]) -> None:
    click.echo(f"\n{'data':16} {'router':20} {'APGR':>6} {'calls→95%':>10} {'cost saved':>11}")
    for row in table:
        r = row.report
        click.echo(f"{row.dataset:16} {row.router:20} {r.apgr:6.3f} {r.calls_to_95:10.1%}"
                   f" {r.cost_saved:11.1%}")
    click.echo(f"\ncost: prompt tokens ≈ chars/{CHARS_PER_TOKEN}, weak ${WEAK_USD_PER_MTOK}/M,"
               f" strong ${STRONG_USD_PER_MTOK}/M; saved vs all-strong at the 95 % point")
