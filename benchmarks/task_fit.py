"""`gateway classifier fit-tasks` on labels of a traffic the shipped task model was never
trained on: fitted on n labelled prompts, scored on the same set's other prompts, against
the shipped model on those same prompts. Ten seeded splits per size (mean ± sd over
splits, and the splits' mean 90 % bootstrap interval).

    python benchmarks/task_fit.py --data ../shared/data [--splits 10] [--sizes 100,300]

Sets: Arena-Hard v2.0 (Chatbot Arena prompts) with the labels of two blind passes under the
project's conventions, the same prompts with their authors' own labels (an organisation
whose conventions differ from ours), and Self-Instruct's user-oriented instructions (blind
labels; smaller, so its sizes are halved). Prints a markdown table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

from gateway.classify.task_type import DEFAULT_TASK_MODEL_PATH, TaskModel
from gateway.offline.training.task_type_fit import TaskFitConfig, fit_to_labels
from gateway.offline.training.task_type_train import (
    Labelled,
    TaskTrainConfig,
    bootstrap_ci,
    load_task_data,
)


def accuracy(model: TaskModel, rows: list[Labelled]) -> list[bool]:
    return [model.assess(r.prompt).type == r.task for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--labels", type=Path, default=Path("training") / "task_types")
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--sizes", default="100,300")
    parser.add_argument("--c", type=float, default=TaskFitConfig().c)
    args = parser.parse_args()
    data = load_task_data(args.labels, args.data, TaskTrainConfig())
    base = json.loads(DEFAULT_TASK_MODEL_PATH.read_text(encoding="utf-8"))
    shipped = TaskModel.load()
    sizes = [int(s) for s in args.sizes.split(",")]
    sets = (("Arena-Hard v2.0, blind labels", data.arena_hard_v2_blind, sizes),
            ("Arena-Hard v2.0, authors' labels", data.arena_hard_v2, sizes),
            ("Self-Instruct user-oriented, blind labels", data.user_oriented_agreed,
             [s // 2 for s in sizes]))
    print(f"fit-tasks, C = {args.c}, {args.splits} splits per row")
    print("| set | fitted on | scored on | shipped model | fitted | fitted's 90 % CI (mean) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, rows, set_sizes in sets:
        for n in set_sizes:
            if not rows or n >= len(rows):
                continue
            before, after, lows, highs = [], [], [], []
            for split in range(args.splits):
                shuffled = list(rows)
                random.Random(split).shuffle(shuffled)
                train, test = shuffled[:n], shuffled[n:]
                fitted = TaskModel.from_document(
                    fit_to_labels(base, train, TaskFitConfig(c=args.c)))
                hits = accuracy(fitted, test)
                low, high = bootstrap_ci(hits)
                before.append(statistics.mean(accuracy(shipped, test)))
                after.append(statistics.mean(hits))
                lows.append(low)
                highs.append(high)
            print(f"| {name} | {n} | {len(rows) - n} | {statistics.mean(before):.3f}"
                  f" | {statistics.mean(after):.3f} ± {statistics.stdev(after):.3f}"
                  f" | [{statistics.mean(lows):.3f}, {statistics.mean(highs):.3f}] |")


if __name__ == "__main__":
    main()
