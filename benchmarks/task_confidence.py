"""Task-type accuracy against the share of requests a `task_p` floor keeps, on labelled sets
the model was never trained on (90 % bootstrap intervals). A rule with `task: [...]` and
`task_p: {gte: X}` acts only on the kept requests; this says what it buys.

    python benchmarks/task_confidence.py --data ../shared/data [--labels training/task_types]

Prints a markdown table; nothing is asserted.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gateway.classify.task_type import TaskModel
from gateway.offline.training.task_type_train import TaskTrainConfig, bootstrap_ci, load_task_data

FLOORS = (0.0, 0.6, 0.7, 0.8, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--labels", type=Path, default=Path("training") / "task_types")
    args = parser.parse_args()
    data = load_task_data(args.labels, args.data, TaskTrainConfig())
    model = TaskModel.load()  # the shipped model: none of these sets is trained on
    sets = (("Self-Instruct user-oriented, both passes agree", data.user_oriented_agreed),
            ("Arena-Hard v2.0, blind labels, both passes agree", data.arena_hard_v2_blind),
            ("Arena-Hard v2.0, authors' labels", data.arena_hard_v2),
            ("MT-Bench, authors' labels", data.mt_bench))
    print("| set | min p | kept | accuracy | 90 % CI | `code` precision (n) |")
    print("|---|---:|---:|---:|---|---:|")
    for name, rows in sets:
        if not rows:
            continue
        scored = [(model.assess(row.prompt), row.task) for row in rows]
        for floor in FLOORS:
            kept = [(task, label) for task, label in scored if task.p >= floor]
            if not kept:
                continue
            hits = [task.type == label for task, label in kept]
            low, high = bootstrap_ci(hits)
            code = [label == "code" for task, label in kept if task.type == "code"]
            precision = f"{sum(code) / len(code):.2f} ({len(code)})" if code else "–"
            print(f"| {name} | {floor:.1f} | {len(kept) / len(scored):.2f}"
                  f" | {sum(hits) / len(hits):.3f} | [{low:.3f}, {high:.3f}] | {precision} |")


if __name__ == "__main__":
    main()
