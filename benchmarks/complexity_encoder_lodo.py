"""Leave-one-dataset-out APGR of the complexity model, with 90 % bootstrap intervals, and the
share of plainly hard and everyday requests it calls "high".

    python benchmarks/complexity_encoder_lodo.py --data ../shared/data [--mmlu-every 4]

Outcome datasets: MMLU and GSM8K (RouteLLM: Mixtral vs GPT-4 correctness) and Arena-Bench
(GPT-4 judge scores, 1-10). Each is left out in turn and every trained part is refitted
without it:
- `length`: longer prompts to the strong model (the baseline);
- `n-gram (shipped)`: the previous shipped model as it is; it was trained on MMLU and GSM8K,
  so only its Arena-Bench row is a left-out figure (the others are marked "seen");
- `n-gram`: the same recipe retrained without the left-out set;
- `depth`, `contrast`, `outcome`: the new model's encoder signals alone, refitted without it
  (depth learns from MMLU subjects, so it has nothing to learn when MMLU is left out; the
  outcome signal learns from the outcome sets left in, and votes on multiple choice only);
- `new model`: the signals together, as shipped, refitted without it.
Then, on prompts no part was trained or calibrated on (Arena-Hard v2.0's hard prompts,
Vicuna-bench's everyday questions; the short textbook-hard and everyday requests in
evaluation/short_hard_everyday*.jsonl and the maths ones in
evaluation/math_hard_everyday_blind.jsonl), the share each shipped model puts in "high".
Prints tables; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_encoder import SIGNALS, EncoderComplexityModel
from gateway.classify.static_encoder import StaticEncoder
from gateway.offline.evaluation.public_prompts import hard_and_everyday, written_hard_and_everyday
from gateway.offline.evaluation.routing_metrics import apgr, apgr_interval, routing_curve
from gateway.offline.training.complexity_encoder_train import (
    EncoderTrainConfig,
    Judged,
    TrainingData,
    load_training_data,
    train_encoder_model,
)
from gateway.offline.training.complexity_train import Outcome, TrainConfig, train_model

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "training" / "task_types"
EVALUATION = REPO / "evaluation"


def ngram_without(data: TrainingData, left_out: str) -> ComplexityModel:
    """The n-gram recipe (`gateway classifier train`) on the RouteLLM sets left in."""
    rows = [Outcome(o.dataset, o.subject or o.dataset, o.prompt, o.weak, o.strong)
            for o in data.outcomes if o.dataset in ("mmlu", "gsm8k") and o.dataset != left_out]
    return ComplexityModel.from_document(train_model(rows, TrainConfig()))


def signal_scores(model: EncoderComplexityModel, prompts: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {"depth": [], "contrast": [], "outcome": [], "new model": []}
    for p in prompts:
        z = dict(zip(SIGNALS, model.standardised(model.signals(p)), strict=True))
        for name in ("depth", "contrast", "outcome"):
            out[name].append(z[name])
        out["new model"].append(model.score(p))
    return {k: np.array(v) for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--mmlu-every", type=int, default=4,
                        help="evaluate on every n-th MMLU row (training uses all of them)")
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    started = time.monotonic()
    data = load_training_data(args.data, TASKS)
    encoder = StaticEncoder.load()
    shipped_ngram = ComplexityModel.load()
    print(f"{'left out':8} {'n':>5} {'router':18} {'APGR':>6}  {'90% CI':>15}  note")
    for left_out in ("mmlu", "gsm8k", "arena"):
        rows: list[Judged] = [o for o in data.outcomes if o.dataset == left_out]
        if left_out == "mmlu":
            rows = rows[::args.mmlu_every]
        prompts = [o.prompt for o in rows]
        weak = np.array([o.weak for o in rows])
        strong = np.array([o.strong for o in rows])
        ngram = shipped_ngram if left_out == "arena" else ngram_without(data, left_out)
        document = train_encoder_model(data.without(left_out), EncoderTrainConfig(), encoder,
                                       ngram)
        model = EncoderComplexityModel.from_document(document, encoder, ngram)
        routers: dict[str, tuple[np.ndarray, str]] = {
            "length": (np.array([len(p) for p in prompts], dtype=float), ""),
            "n-gram (shipped)": (np.array([shipped_ngram.score(p) for p in prompts]),
                                 "" if left_out == "arena" else "seen"),
            "n-gram": (np.array([ngram.score(p) for p in prompts]), ""),
        }
        for name, scores in signal_scores(model, prompts).items():
            note = "no MMLU to learn from" if name == "depth" and left_out == "mmlu" else ""
            routers[name] = (scores, note)
        for name, (scores, note) in routers.items():
            low, high = apgr_interval(scores, weak, strong, args.draws)
            value = apgr(routing_curve(scores, weak, strong))
            print(f"{left_out:8} {len(rows):5} {name:18} {value:6.3f}  [{low:.3f}, {high:.3f}]"
                  f"  {note}", flush=True)

    new = EncoderComplexityModel.load()
    written = EVALUATION / "short_hard_everyday.jsonl"
    blind = EVALUATION / "short_hard_everyday_blind.jsonl"
    blind_2 = EVALUATION / "short_hard_everyday_blind_2.jsonl"
    maths = EVALUATION / "math_hard_everyday_blind.jsonl"
    for title, (hard, easy) in (("Arena-Hard v2.0 / Vicuna-bench", hard_and_everyday(TASKS)),
                                ("short textbook-hard / everyday",
                                 written_hard_and_everyday(written)),
                                ("the same, written blind", written_hard_and_everyday(blind)),
                                ("a second blind set, by the writer of the training files",
                                 written_hard_and_everyday(blind_2)),
                                ("maths, plainly hard / elementary, written blind",
                                 written_hard_and_everyday(maths))):
        print(f"\n{title} (n = {len(hard)}, {len(easy)}; never trained or calibrated on)")
        print(f"{'model':24} {'hard -> high':>14} {'everyday -> high':>17}")
        for name, assess in (("n-gram (previous)", shipped_ngram.assess),
                             ("new model", new.assess)):
            h = np.mean([assess(p).label == "high" for p in hard])
            e = np.mean([assess(p).label == "high" for p in easy])
            print(f"{name:24} {h:14.2f} {e:17.2f}")
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
