"""Trains the complexity model on RouteLLM's per-prompt outcomes and exports it as JSON.

Offline only (scikit-learn is imported here, never on the request path). The exported model
is a linear score over `complexity_features.extract_features`, squashed to a probability.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression, Ridge

from gateway.classify.complexity import MODEL_FORMAT, ComplexityModel
from gateway.classify.complexity_features import (
    FEATURIZER_VERSION,
    FORMATS,
    HEAD_CHARS,
    TAIL_CHARS,
    PromptFeatures,
    extract_features,
)

DATA_FILE = Path("routing") / "routellm_mmlu_gsm8k.jsonl"
# Log-odds; rounding to 5 decimals and dropping |w| < 5e-5 stays far below this.
EXPORT_TOLERANCE = 0.02


@dataclass(frozen=True, slots=True)
class Outcome:
    """One prompt and whether each model answered it correctly."""

    benchmark: str  # "mmlu" | "gsm8k"
    group: str  # MMLU subject, or the benchmark name: the unit held out together
    prompt: str
    weak_score: float
    strong_score: float


@dataclass(frozen=True, slots=True)
class Split:
    train: list[Outcome]
    heldout_mmlu: list[Outcome]
    heldout_gsm8k: list[Outcome]
    heldout_subjects: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Hyper-parameters, chosen by grouped cross-validation on the training part only."""

    seed: int = 0
    mmlu_heldout_share: float = 0.25  # of MMLU rows, drawn as whole subjects
    gsm8k_heldout_share: float = 0.30  # of GSM8K rows
    alpha: float = 300.0  # ridge penalty
    ngram_scale: float = 0.5  # n-gram value: < 1 penalises words more than dense features
    length_prior: float = 1.0  # added to the length weight, in score-σ per length-σ
    min_groups: int = 5  # keep n-grams seen in at least this many subjects: no memorising
    calibration_folds: int = 3
    low_share: float = 0.5  # thresholds put ~50 % of training prompts in "low" ...
    high_share: float = 0.2  # ... and ~20 % in "high"


def load_outcomes(data_root: Path) -> list[Outcome]:
    path = data_root / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(f"routing outcomes not found: {path} (expected under --data)")
    outcomes = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            benchmark = row["benchmark"]
            outcomes.append(
                Outcome(
                    benchmark=benchmark,
                    group=row.get("subject") or benchmark,
                    prompt=row["prompt"],
                    weak_score=float(row["weak_score"]),
                    strong_score=float(row["strong_score"]),
                )
            )
    return outcomes


def split_outcomes(outcomes: Sequence[Outcome], config: TrainConfig) -> Split:
    """MMLU: whole subjects, in seeded random order, held out until their rows reach the share
    (so near-duplicate questions never straddle the split). GSM8K: seeded random rows."""
    rng = random.Random(config.seed)
    mmlu = [o for o in outcomes if o.benchmark == "mmlu"]
    gsm8k = [o for o in outcomes if o.benchmark == "gsm8k"]
    sizes: dict[str, int] = defaultdict(int)
    for o in mmlu:
        sizes[o.group] += 1
    subjects = sorted(sizes)
    rng.shuffle(subjects)
    heldout: set[str] = set()
    rows = 0
    for subject in subjects:
        if rows >= config.mmlu_heldout_share * len(mmlu):
            break
        heldout.add(subject)
        rows += sizes[subject]
    order = list(range(len(gsm8k)))
    rng.shuffle(order)
    cut = round(config.gsm8k_heldout_share * len(gsm8k))
    gsm8k_test = {i for i in order[:cut]}
    return Split(
        train=[o for o in mmlu if o.group not in heldout]
        + [o for i, o in enumerate(gsm8k) if i not in gsm8k_test],
        heldout_mmlu=[o for o in mmlu if o.group in heldout],
        heldout_gsm8k=[o for i, o in enumerate(gsm8k) if i in gsm8k_test],
        heldout_subjects=tuple(sorted(heldout)),
    )


def gain(outcomes: Sequence[Outcome]) -> np.ndarray:
    """The target: strong − weak score. Routing prompt i to the strong model changes quality by
    exactly this, so ranking by its expectation is what maximises the PGR curve (APGR)."""
    return np.array([o.strong_score - o.weak_score for o in outcomes])


def train_model(train: Sequence[Outcome], config: TrainConfig) -> dict[str, Any]:
    """Fit, calibrate and export; returns the JSON document `ComplexityModel` loads."""
    features = [extract_features(o.prompt) for o in train]
    kept = _spread_ngrams(features, [o.group for o in train], config.min_groups)
    rows = [_training_row(f, kept, config) for f in features]
    y = gain(train)
    vectorizer = DictVectorizer()
    x = vectorizer.fit_transform(rows)
    ridge = Ridge(alpha=config.alpha).fit(x, y)

    # Calibration and thresholds come from out-of-fold scores: in-sample scores of a model with
    # thousands of n-grams are over-spread and would misplace both.
    oof = _out_of_fold_scores(x, y, train, config)
    weights = dict(zip(vectorizer.get_feature_names_out(), ridge.coef_, strict=True))
    # Length prior: prompt length is the one cue known to rank unseen subjects (the README's
    # baseline), while ridge fitted on the training subjects shrinks it like any other feature.
    lengths = np.array([f.dense["#len"] for f in features])
    length_weight = config.length_prior * float(oof.std() / lengths.std())
    weights["#len"] = weights.get("#len", 0.0) + length_weight / _scale("#len", config)
    oof = oof + length_weight * lengths
    target = np.array([o.weak_score == 0.0 and o.strong_score == 1.0 for o in train])
    platt = LogisticRegression(C=1e6).fit(oof.reshape(-1, 1), target)
    slope, offset = float(platt.coef_[0, 0]), float(platt.intercept_[0])
    if slope <= 0:
        raise RuntimeError("calibration slope is not positive: the score does not rank gain")
    p_oof = 1.0 / (1.0 + np.exp(-(slope * oof + offset)))
    thresholds = [
        round(float(np.quantile(p_oof, config.low_share)), 4),
        round(float(np.quantile(p_oof, 1.0 - config.high_share)), 4),
    ]
    document = {
        "format": MODEL_FORMAT,
        "description": (
            "p_strong = sigmoid(intercept[fmt] + sum(ngrams[fmt][g] for g in ngrams present)"
            " + sum(dense[fmt][k] * value[k])); features from"
            " gateway/classify/complexity_features.py"
        ),
        "featurizer": {
            "version": FEATURIZER_VERSION,
            "head_chars": HEAD_CHARS,
            "tail_chars": TAIL_CHARS,
        },
        "thresholds": thresholds,
        "training": {
            "config": asdict(config),
            "data": str(DATA_FILE),
            "target": "strong_score - weak_score (ridge),"
            " Platt-scaled to P(weak wrong and strong right)",
            "rows": len(train),
            "kept_ngrams": len(kept),
            "calibration": {"slope": round(slope, 6), "offset": round(offset, 6)},
            "length_weight": round(length_weight, 6),
        },
        **_export_tables(weights, float(ridge.intercept_), slope, offset, config),
    }
    fitted = slope * (ridge.predict(x) + length_weight * lengths) + offset
    _check_export(document, train, fitted)
    return document


def _check_export(document: dict[str, Any], train: Sequence[Outcome], fitted: np.ndarray) -> None:
    """The exported tables, scored by the inference code, must reproduce the fitted model (up
    to rounding and pruning): training and serving cannot silently disagree."""
    model = ComplexityModel.from_document(document)
    step = max(1, len(train) // 200)
    worst = max(
        abs(model.score(train[i].prompt) - fitted[i]) for i in range(0, len(train), step)
    )
    if worst > EXPORT_TOLERANCE:
        raise RuntimeError(f"exported model disagrees with the fitted one by {worst:.4f}")


def _spread_ngrams(
    features: Sequence[PromptFeatures], groups: Sequence[str], min_groups: int
) -> frozenset[str]:
    """N-grams seen in at least `min_groups` groups: words that name one subject would only
    teach the model that subject's difficulty, which a held-out subject cannot use."""
    seen: dict[str, set[str]] = defaultdict(set)
    for f, group in zip(features, groups, strict=True):
        for ngram in f.ngrams:
            seen[ngram].add(group)
    return frozenset(g for g, where in seen.items() if len(where) >= min_groups)


def _scale(name: str, config: TrainConfig) -> float:
    """Value multiplier in training (and weight multiplier at export): ridge shrinks a feature's
    weight less the larger its values, so this sets each feature family's prior strength."""
    return 1.0 if name.startswith("#") else config.ngram_scale


def _training_row(f: PromptFeatures, kept: frozenset[str], config: TrainConfig) -> dict[str, float]:
    """Each feature twice, shared and format-specific ("mcq|word"), so multiple-choice and free
    prompts share what transfers and keep their own weights where they differ."""
    row = {f"{f.fmt}|#bias": 1.0}
    scale = config.ngram_scale
    for ngram in f.ngrams & kept:
        row[ngram] = scale
        row[f"{f.fmt}|{ngram}"] = scale
    for name, value in f.dense.items():
        row[name] = row[f"{f.fmt}|{name}"] = value * _scale(name, config)
    return row


def _out_of_fold_scores(
    x: Any, y: np.ndarray, train: Sequence[Outcome], config: TrainConfig
) -> np.ndarray:
    """Scores from models that never saw the prompt's MMLU subject (GSM8K: its row)."""
    k_folds = config.calibration_folds
    subjects = sorted({o.group for o in train if o.benchmark == "mmlu"})
    random.Random(config.seed).shuffle(subjects)
    fold_of = {s: i % k_folds for i, s in enumerate(subjects)}
    folds = np.array(
        [fold_of[o.group] if o.group in fold_of else i % k_folds for i, o in enumerate(train)]
    )
    scores = np.zeros(len(y))
    for k in range(k_folds):
        test = folds == k
        model = Ridge(alpha=config.alpha).fit(x[~test], y[~test])
        scores[test] = model.predict(x[test])
    return scores


def _export_tables(
    weights: dict[str, float], intercept: float, slope: float, offset: float, config: TrainConfig
) -> dict[str, Any]:
    """Fold shared + format-specific weights, the n-gram scale and the calibration into one
    table per format, so inference is a plain sum; near-zero weights are dropped."""
    intercepts: dict[str, float] = {}
    ngrams: dict[str, dict[str, float]] = {}
    dense: dict[str, dict[str, float]] = {}
    shared = {k: w for k, w in weights.items() if "|" not in k}
    for fmt in FORMATS:
        own = {k.split("|", 1)[1]: w for k, w in weights.items() if k.startswith(f"{fmt}|")}
        intercepts[fmt] = round(slope * (intercept + own.pop("#bias", 0.0)) + offset, 6)
        merged = {
            k: slope * _scale(k, config) * (shared.get(k, 0.0) + own.get(k, 0.0))
            for k in shared.keys() | own
        }
        dense[fmt] = {k: round(w, 6) for k, w in sorted(merged.items()) if k.startswith("#")}
        ngrams[fmt] = {
            k: round(w, 5)
            for k, w in sorted(merged.items())
            if not k.startswith("#") and abs(w) >= 5e-5
        }
    return {"intercept": intercepts, "dense": dense, "ngrams": ngrams}


def write_model(document: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False, sort_keys=False) + "\n")
