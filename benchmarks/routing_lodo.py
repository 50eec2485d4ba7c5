"""Leave-one-dataset-out routing quality: APGR with bootstrap 90 % intervals per left-out set.

    python benchmarks/routing_lodo.py --data ../shared/data [--mmlu-every 4] [--draws 500]

Datasets: MMLU, GSM8K (RouteLLM outcomes) and Arena-Bench chat (GPT-4 judge scores). Each is
left out in turn; a router trained on the others ranks its prompts. Routers:
- `length`: longer prompts to the strong model (the baseline to beat);
- `complexity (shipped)`: today's model; it was trained on MMLU and GSM8K, so only its
  Arena-Bench row is a left-out result (its MMLU/GSM8K rows are marked "seen");
- `task+dense`: a logistic regression on the task-type model's log-probabilities (a task
  prior) and the dense prompt measurements (length, digits, options...; within-task
  difficulty), fitted on the other datasets' outcomes (target: the strong model scored
  higher), each dataset weighted equally. The task model saw Arena-Bench prompts' task labels
  (never their outcomes);
- `task+dense, within`: the same inputs with one intercept per training dataset, so the
  weights learn only what varies inside a dataset (a within-task difficulty term), not the
  datasets' different base rates.
Also the expected calibration error (10 bins) of task+dense's p_strong on the left-out set,
against "the strong model scored higher". Prints a table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_features import extract_features
from gateway.classify.task_type import TaskModel
from gateway.offline.evaluation.routing_metrics import apgr, apgr_interval, routing_curve

Array = np.ndarray


def load(data_root: Path, mmlu_every: int) -> dict[str, list[dict]]:
    routing = data_root / "routing"
    with (routing / "routellm_mmlu_gsm8k.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    with (routing / "arena_bench_v1_judgments.jsonl").open(encoding="utf-8") as lines:
        arena = [json.loads(line) for line in lines]
    return {
        "mmlu": [r for r in rows if r["benchmark"] == "mmlu"][::mmlu_every],
        "gsm8k": [r for r in rows if r["benchmark"] == "gsm8k"],
        "arena": arena,
    }


@dataclass(frozen=True)
class Outcomes:
    """Each dataset's prompts, outcomes and task+dense feature rows, by dataset name."""

    prompts: dict[str, list[str]]
    weak: dict[str, Array]
    strong: dict[str, Array]
    x: dict[str, Array]


def outcomes(data_root: Path, mmlu_every: int) -> Outcomes:
    data = load(data_root, mmlu_every)
    prompts = {name: [r["prompt"] for r in rows] for name, rows in data.items()}
    weak = {n: np.array([float(r["weak_score"]) for r in rows]) for n, rows in data.items()}
    strong = {n: np.array([float(r["strong_score"]) for r in rows]) for n, rows in data.items()}
    dense_names = sorted({k for ps in prompts.values() for p in ps[:200]
                          for k in extract_features(p).dense})
    x = {n: task_dense_features(ps, dense_names) for n, ps in prompts.items()}
    return Outcomes(prompts, weak, strong, x)


def task_dense_features(prompts: list[str], dense_names: list[str]) -> Array:
    tasks = TaskModel.load()
    out = []
    for prompt in prompts:
        features = extract_features(prompt)
        log_p = [math.log(max(p, 1e-6)) for p in tasks.probabilities(features)]
        out.append(log_p + [features.dense.get(name, 0.0) for name in dense_names])
    return np.array(out)


def within_dataset_scores(x: dict[str, Array], strong: dict[str, Array],
                          weak: dict[str, Array], trained_on: list[str], left_out: str) -> Array:
    """A task prior plus a within-task difficulty term learned only from variation inside
    each training dataset: one intercept per dataset (so the weights cannot learn "MMLU vs
    GSM8K" base rates) over standardised task log-probabilities and dense features, heavily
    penalised. Returns the left-out set's linear scores (ranking only: no base rate is
    known for a dataset never seen)."""
    xs = np.vstack([x[n] for n in trained_on])
    mean, spread = xs.mean(axis=0), xs.std(axis=0)
    spread[spread < 1e-9] = 1.0
    which = np.concatenate([np.full(len(x[n]), i) for i, n in enumerate(trained_on)])
    dataset = np.eye(len(trained_on))[which] * 10.0  # ×10: its intercepts are barely penalised
    won = np.concatenate([(strong[n] > weak[n]).astype(int) for n in trained_on])
    weight = np.concatenate([np.full(len(x[n]), 1.0 / len(x[n])) for n in trained_on])
    model = LogisticRegression(C=0.01, max_iter=5000, fit_intercept=False).fit(
        np.hstack([(xs - mean) / spread, dataset]), won, weight * len(won))
    return ((x[left_out] - mean) / spread) @ model.coef_[0][: xs.shape[1]]


def calibration_error(p: Array, won: Array, bins: int = 10) -> float:
    edges = np.quantile(p, np.linspace(0, 1, bins + 1))
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    error = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            error += inside.mean() * abs(p[inside].mean() - won[inside].mean())
    return error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--mmlu-every", type=int, default=4, help="every n-th MMLU row")
    parser.add_argument("--draws", type=int, default=500, help="bootstrap draws")
    args = parser.parse_args()
    data = outcomes(args.data, args.mmlu_every)
    prompts, weak, strong, x = data.prompts, data.weak, data.strong, data.x
    complexity = ComplexityModel.load()

    print(f"{'left out':8} {'n':>5} {'router':22} {'APGR':>6}  {'90% CI':>15}  {'ECE':>5}")
    for left_out in prompts:
        trained_on = [n for n in prompts if n != left_out]
        xs = np.vstack([x[n] for n in trained_on])
        won = np.concatenate([(strong[n] > weak[n]).astype(int) for n in trained_on])
        # Each training dataset counts equally, whatever its size.
        weight = np.concatenate([np.full(len(x[n]), 1.0 / len(x[n])) for n in trained_on])
        model = LogisticRegression(C=1.0, max_iter=3000).fit(xs, won, weight * len(won))
        p = model.predict_proba(x[left_out])[:, 1]
        within = within_dataset_scores(x, strong, weak, trained_on, left_out)
        routers: dict[str, tuple[Array, str]] = {
            "length": (np.array([len(t) for t in prompts[left_out]], dtype=float), ""),
            "complexity (shipped)": (
                np.array([complexity.score(t) for t in prompts[left_out]]),
                "" if left_out == "arena" else "seen"),
            "task+dense": (p, f"{calibration_error(p, strong[left_out] > weak[left_out]):.3f}"),
            "task+dense, within": (within, ""),
        }
        for name, (scores, note) in routers.items():
            value = apgr(routing_curve(scores, weak[left_out], strong[left_out]))
            low, high = apgr_interval(scores, weak[left_out], strong[left_out], args.draws)
            print(f"{left_out:8} {len(scores):5} {name:22} {value:6.3f}  [{low:.3f}, {high:.3f}]"
                  f"  {note:>5}")


if __name__ == "__main__":
    main()
