"""`gateway router fit` on Arena-Bench outcomes (a dataset the shipped models never saw
outcomes of): fit on part, APGR on the rest, over several random splits.

    python benchmarks/router_fit_arena.py --data ../shared/data [--fit 200] [--splits 10]

Prints, per split and as the mean, the fitted router's APGR on the held-out prompts beside
prompt length and the shipped complexity model; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

import numpy as np

from gateway.classify.complexity import ComplexityModel
from gateway.classify.router_model import RouterModel
from gateway.tools.router_fit import JudgedPrompt, fit_router
from gateway.tools.routing_metrics import apgr, routing_curve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--fit", type=int, default=200, help="outcomes to fit on per split")
    parser.add_argument("--splits", type=int, default=10)
    args = parser.parse_args()
    path = args.data / "routing" / "arena_bench_v1_judgments.jsonl"
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    judged = [JudgedPrompt(r["prompt"], float(r["weak_score"]), float(r["strong_score"]))
              for r in rows]
    complexity = ComplexityModel.load()
    results: dict[str, list[float]] = {"router": [], "length": [], "complexity": []}
    print(f"{'split':>5} {'router':>7} {'length':>7} {'complexity':>10}")
    for split in range(args.splits):
        order = list(judged)
        random.Random(split).shuffle(order)
        train, test = order[: args.fit], order[args.fit :]
        router = RouterModel.from_document(fit_router(train))
        weak = np.array([o.weak_score for o in test])
        strong = np.array([o.strong_score for o in test])
        scores = {
            "router": np.array([router.p_strong(o.prompt) for o in test]),
            "length": np.array([float(len(o.prompt)) for o in test]),
            "complexity": np.array([complexity.score(o.prompt) for o in test]),
        }
        for name, values in scores.items():
            results[name].append(apgr(routing_curve(values, weak, strong)))
        print(f"{split:5} {results['router'][-1]:7.3f} {results['length'][-1]:7.3f}"
              f" {results['complexity'][-1]:10.3f}")
    print("mean  " + "  ".join(f"{name} {statistics.mean(v):.3f} ± {statistics.stdev(v):.3f}"
                               for name, v in results.items()))


if __name__ == "__main__":
    main()
