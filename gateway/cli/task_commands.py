"""`gateway classifier train-tasks|eval-tasks`: the task-type model, trained on the labelled
prompts in training/task_types/ and the shared data, and its accuracy on prompts it was not
trained on (registered on the `classifier` group when imported)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gateway.classify.task_type import DEFAULT_TASK_MODEL_PATH, TaskModel
from gateway.cli import encoder_commands  # noqa: F401  (registers distill, train-complexity)
from gateway.cli.extras import needs_train
from gateway.cli.sensitivity_commands import classifier

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from gateway.offline.training.task_type_train import (
        Labelled,
        TaskData,
        TaskTrainConfig,
    )

FOLDS = 5

_data_option = click.option(
    "--data", "data_root", required=True, type=click.Path(path_type=Path),
    help="data root holding routing/routellm_mmlu_gsm8k.jsonl and arena_bench_v1_judgments")
_labels_option = click.option(
    "--labels", "labels_dir", type=click.Path(path_type=Path),
    default=Path("training") / "task_types", show_default=True,
    help="folder with authored.jsonl and arena_bench_v1_labels.jsonl")


@classifier.command("train-tasks")
@_data_option
@_labels_option
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_TASK_MODEL_PATH,
              show_default=True, help="where to write the model JSON")
@needs_train
def train_tasks(data_root: Path, labels_dir: Path, out: Path) -> None:
    """Train the task-type model on every labelled prompt and write it."""
    from gateway.offline.training.task_type_train import TaskTrainConfig, fit, write_task_model

    config = TaskTrainConfig()
    data = _load_or_exit(labels_dir, data_root, config)
    rows = [*data.authored, *data.benchmark, *data.arena]
    document = fit(rows, config)
    write_task_model(document, out)
    click.echo(f"trained on {len(rows)} prompts {document['training']['examples']};"
               f" wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")


@classifier.command("eval-tasks")
@_data_option
@_labels_option
@needs_train
def eval_tasks(data_root: Path, labels_dir: Path) -> None:
    """Accuracy on labelled prompts the model was not trained on, with bootstrap 90 % CIs:
    Arena-Bench chat prompts by a model trained without any of them (transfer), the same
    prompts by 5-fold cross-validation (the shipped model's recipe, each fold unseen),
    MMLU/GSM8K rows outside the training sample, MT-Bench's, Vicuna-bench's and Arena-Hard
    v2.0's questions labelled by their authors, self-instruct's user-oriented instructions
    and Arena-Hard v2.0's labelled blind twice for the project (the shipped recipe; none of
    these is ever trained on), and how often Arena-Hard's authors label a prompt as the
    blind passes do."""
    from gateway.offline.training.task_type_train import TaskTrainConfig, fit

    config = TaskTrainConfig()
    data = _load_or_exit(labels_dir, data_root, config)
    without_arena = TaskModel.from_document(fit([*data.authored, *data.benchmark], config))
    _report("arena, trained without it", data.arena, _predict(without_arena, data.arena))
    _report(f"arena, {FOLDS}-fold", *_cross_validate(data, config))
    rest = data.benchmark_rest[:: max(1, len(data.benchmark_rest) // 1500)]
    _report("mmlu+gsm8k, unsampled rows", rest, _predict(without_arena, rest))
    held_out = (("user-oriented, both agree", data.user_oriented_agreed),
                ("user-oriented, first pass", data.user_oriented),
                ("mt-bench, authors' labels", data.mt_bench),
                ("vicuna-bench, authors' labels", data.vicuna),
                ("arena-hard v2, authors' labels", data.arena_hard_v2),
                ("arena-hard v2, blind, agree", data.arena_hard_v2_blind),
                ("arena-hard v2, all three agree", [
                    row for row, authors in zip(data.arena_hard_v2_blind,
                                                data.arena_hard_v2_authors_of_blind, strict=True)
                    if row.task == authors]))
    if any(rows for _, rows in held_out):  # never trained on
        shipped = TaskModel.from_document(
            fit([*data.authored, *data.benchmark, *data.arena], config))
        for name, rows in held_out:
            if rows:
                _report(name, rows, _predict(shipped, rows))
    if data.arena_hard_v2_blind:
        # The ceiling the authors' labels put on a model that follows this project's
        # conventions: their label scored against the blind passes' agreed one.
        _report("arena-hard v2 authors vs blind", data.arena_hard_v2_blind,
                data.arena_hard_v2_authors_of_blind)


def _cross_validate(data: TaskData, config: TaskTrainConfig) -> tuple[list[Labelled], list[str]]:
    from gateway.offline.training.task_type_train import fit

    arena = list(data.arena)
    random.Random(config.seed).shuffle(arena)
    rows: list[Labelled] = []
    predicted: list[str] = []
    for fold in range(FOLDS):
        test = arena[fold::FOLDS]
        train = [r for i, r in enumerate(arena) if i % FOLDS != fold]
        model = TaskModel.from_document(fit([*data.authored, *data.benchmark, *train], config))
        rows += test
        predicted += _predict(model, test)
    return rows, predicted


def _predict(model: TaskModel, rows: Sequence[Labelled]) -> list[str]:
    return [model.assess(r.prompt).type for r in rows]


def _report(name: str, rows: Sequence[Labelled], predicted: Sequence[str]) -> None:
    from gateway.offline.training.task_type_train import bootstrap_ci

    hits = [p == r.task for p, r in zip(predicted, rows, strict=True)]
    low, high = bootstrap_ci(hits)
    click.echo(f"{name:30} n={len(hits):5}  accuracy {sum(hits) / len(hits):.3f}"
               f"  90% CI [{low:.3f}, {high:.3f}]")
    confusions = Counter((r.task, p) for p, r in zip(predicted, rows, strict=True) if p != r.task)
    if confusions:
        click.echo("  most confused (label → predicted): " + ", ".join(
            f"{t}→{p} {n}" for (t, p), n in confusions.most_common(5)))


def _load_or_exit(labels_dir: Path, data_root: Path, config: TaskTrainConfig) -> TaskData:
    from gateway.offline.training.task_type_train import load_task_data

    try:
        return load_task_data(labels_dir, data_root, config)
    except (FileNotFoundError, KeyError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc


@classifier.command("fit-tasks")
@click.option("--labelled", "labelled_path", required=True,
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help='your prompts, one JSON per line: {"prompt": str, "task": a task type}')
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="where to write the fitted model (point GATEWAY_TASK_MODEL at it)")
@click.option("--base", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None, help="the model to adapt; default: the shipped one")
@click.option("--test", "test_path", type=click.Path(path_type=Path, exists=True,
              dir_okay=False), default=None,
              help="labelled prompts kept out of the fit: accuracy before and after on them")
@click.option("--c", "c", type=click.FloatRange(min=0, min_open=True), default=4.0,
              show_default=True, help="how far your labels may pull from the base model")
@needs_train
def fit_tasks(labelled_path: Path, out: Path, base: Path | None, test_path: Path | None,
              c: float) -> None:
    """Fit the task-type model to your own labelled prompts: the shipped model adapted (its
    weights are the prior), so a few hundred labels already help."""
    from gateway.classify.model_files import read_document
    from gateway.classify.task_type import DEFAULT_TASK_MODEL_PATH, TaskModelError
    from gateway.offline.training.task_type_fit import (
        LabelledFileError,
        TaskFitConfig,
        fit_to_labels,
        read_labelled,
    )
    from gateway.offline.training.task_type_train import write_task_model

    try:
        document = read_document(base or DEFAULT_TASK_MODEL_PATH, "task model", TaskModelError)
        before = TaskModel.from_document(document)  # refuses what is not a usable task model
        rows = read_labelled(labelled_path)
        test = read_labelled(test_path) if test_path is not None else []
    except (TaskModelError, LabelledFileError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    fitted = fit_to_labels(document, rows, TaskFitConfig(c=c))
    try:
        write_task_model(fitted, out)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from None
    counts = ", ".join(f"{task} {n}" for task, n in fitted["adapted"]["examples"].items())
    click.echo(f"fitted on {len(rows)} prompts ({counts}); wrote {out}")
    if test:
        _report("before (base model)", test, _predict(before, test))
        _report("after (fitted)", test, _predict(TaskModel.from_document(fitted), test))
