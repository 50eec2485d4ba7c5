"""`gateway router fit` on outcomes of a data set the base router never saw: fit on part, APGR
on the rest, over several random splits.

    python benchmarks/router_fit_arena.py --data ../shared/data [--dataset gsm8k|mmlu|arena]
        [--fit 1000] [--splits 10] [--draws 500]

- `gsm8k` (the headline: 1,319 prompts, so 1,000 outcomes can be fitted on): the base
  complexity model (its n-gram part included) is retrained here without GSM8K's outcomes
  (the shipped one saw them), then
  the router is fitted on `--fit` GSM8K outcomes and scored on the other prompts.
- `mmlu` (multiple choice, 14,042 prompts in 57 subjects): as `gsm8k`, but split by whole
  subjects (fitted on subjects until `--fit` prompts, scored on every other subject), so
  near-duplicate questions of a subject never sit on both sides.
- `arena`: the complexity model is retrained without Arena-Bench's outcomes (the shipped
  one's outcome signal saw them; its n-gram model did not and is kept); 292 prompts, so
  `--fit` is capped at 200 (the rest are scored).
The task-type model is the shipped one in both cases (it saw Arena-Bench task labels, never
outcomes). Prints, per split, the fitted router's APGR with a bootstrap 90 % interval on the
held-out prompts beside prompt length and the base complexity model, and the router's
expected calibration error there, then the means; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

import numpy as np

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.router_model import RouterModel
from gateway.offline.evaluation.routing_metrics import apgr, apgr_interval, routing_curve
from gateway.offline.training.complexity_encoder_train import (
    EncoderTrainConfig,
    load_training_data,
    train_encoder_model,
)
from gateway.offline.training.complexity_train import TrainConfig, load_outcomes, train_model
from gateway.offline.training.router_fit import JudgedPrompt, fit_router


def grouped_prompts(data: Path, dataset: str) -> list[tuple[JudgedPrompt, str]]:
    """Each judged prompt with the unit a split keeps together (an MMLU subject; else the
    prompt itself)."""
    if dataset == "arena":
        path = data / "routing" / "arena_bench_v1_judgments.jsonl"
        with path.open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines]
        return [(JudgedPrompt(r["prompt"], float(r["weak_score"]), float(r["strong_score"])),
                 r["prompt"]) for r in rows]
    return [(JudgedPrompt(o.prompt, o.weak_score, o.strong_score),
             o.group if dataset == "mmlu" else o.prompt)
            for o in load_outcomes(data) if o.benchmark == dataset]


def split_groups(judged: list[tuple[JudgedPrompt, str]], fit_size: int, seed: int,
                 ) -> tuple[list[JudgedPrompt], list[JudgedPrompt]]:
    """Whole groups in seeded random order go to the fitting side until it holds `fit_size`
    prompts; the rest are scored."""
    groups: dict[str, list[JudgedPrompt]] = {}
    for prompt, group in judged:
        groups.setdefault(group, []).append(prompt)
    names = list(groups)  # first-seen order: one prompt per group shuffles as the list did
    random.Random(seed).shuffle(names)
    train: list[JudgedPrompt] = []
    test: list[JudgedPrompt] = []
    for name in names:
        (train if len(train) < fit_size else test).extend(groups[name])
    return train, test


def base_model(data: Path, dataset: str) -> EncoderComplexityModel:
    """A complexity model that never saw `dataset`'s outcomes (the shipped one's outcome
    signal learned from all three sets, so it is retrained here for each)."""
    if dataset == "arena":  # the shipped n-gram model learned from MMLU and GSM8K only
        ngram = ComplexityModel.load()
    else:
        others = [o for o in load_outcomes(data) if o.benchmark != dataset]
        ngram = ComplexityModel.from_document(train_model(others, TrainConfig()))
    prompts = Path(__file__).resolve().parents[1] / "training" / "task_types"
    training = load_training_data(data, prompts).without(dataset)
    return EncoderComplexityModel.from_document(
        train_encoder_model(training, EncoderTrainConfig(), ngram=ngram), ngram=ngram)


def calibration_error(p: np.ndarray, won: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over equal-count bins of p."""
    order = np.argsort(p, kind="stable")
    return float(sum(len(part) / len(p) * abs(p[part].mean() - won[part].mean())
                     for part in np.array_split(order, bins) if len(part)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--dataset", choices=("gsm8k", "mmlu", "arena"), default="gsm8k")
    parser.add_argument("--fit", type=int, default=1000, help="outcomes to fit on per split")
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--draws", type=int, default=500, help="bootstrap draws per split")
    args = parser.parse_args()
    judged = grouped_prompts(args.data, args.dataset)
    fit_size = min(args.fit, len(judged) - 90)
    complexity = base_model(args.data, args.dataset)
    results: dict[str, list[float]] = {"router": [], "length": [], "complexity": []}
    intervals: list[tuple[float, float]] = []
    errors: list[float] = []  # the router's calibration error on each split's held-out part
    print(f"{args.dataset}: fit on about {fit_size}, scored on the rest"
          f" ({len(judged)} prompts) per split")
    print(f"{'split':>5} {'router':>7} {'90% CI':>15} {'length':>7} {'complexity':>10}"
          f" {'ECE':>5}")
    for split in range(args.splits):
        train, test = split_groups(judged, fit_size, split)
        router = RouterModel.from_document(fit_router(train, complexity), complexity)
        weak = np.array([o.weak_score for o in test])
        strong = np.array([o.strong_score for o in test])
        scores = {
            "router": np.array([router.p_strong(o.prompt) for o in test]),
            "length": np.array([float(len(o.prompt)) for o in test]),
            "complexity": np.array([complexity.score(o.prompt) for o in test]),
        }
        for name, values in scores.items():
            results[name].append(apgr(routing_curve(values, weak, strong)))
        intervals.append(apgr_interval(scores["router"], weak, strong, args.draws))
        errors.append(calibration_error(scores["router"], strong > weak))
        low, high = intervals[-1]
        print(f"{split:5} {results['router'][-1]:7.3f} [{low:.3f}, {high:.3f}]"
              f" {results['length'][-1]:7.3f} {results['complexity'][-1]:10.3f}"
              f" {errors[-1]:5.3f}")
    print("mean  " + "  ".join(f"{name} {statistics.mean(v):.3f} ± {statistics.stdev(v):.3f}"
                               for name, v in results.items()))
    print(f"router's 90% interval, mean of the splits' ends: "
          f"[{statistics.mean(i[0] for i in intervals):.3f},"
          f" {statistics.mean(i[1] for i in intervals):.3f}]; calibration error (10 bins) of"
          f" its p_strong against 'strong scored higher': {statistics.mean(errors):.3f}")


if __name__ == "__main__":
    main()
