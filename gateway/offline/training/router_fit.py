"""Fits a router (router_model.RouterModel) to judged outcomes: JSON lines
`{"prompt", "weak_score", "strong_score"}` (optional `id`, `weak_model`, `strong_model`;
scores on any scale, higher is better). Offline only: scikit-learn is imported here."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.complexity_features import FEATURIZER_VERSION
from gateway.classify.router_model import (
    COMPLEXITY_INPUT,
    ROUTER_FILE,
    ROUTER_FORMAT,
    SIGNAL_INPUTS,
    router_inputs,
)
from gateway.classify.task_type import TaskModel
from gateway.offline.training.json_lines import json_lines

MIN_OUTCOMES = 20
# Inverse penalties tried, strongest first; cross-validation on the outcomes picks one.
PENALTIES = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
FOLDS = 5
COMPLEXITY_BOOST = 10.0  # the shipped score's column ×10: its weight costs 100× less
BOOSTED = frozenset((COMPLEXITY_INPUT, *SIGNAL_INPUTS))
NGRAM_SCALE = 0.3  # n-gram presence ×0.3: words cost ~10× more than a dense input
# The encoder's dimensions as a block: each at full weight, or each scaled by 1/sqrt(dims) so
# the block as a whole costs what one input does. Cross-validation picks (with the penalty):
# on 1,000 GSM8K outcomes the full block over-fitted (it sits near the smallest penalty);
# on a few hundred chat outcomes neither wins clearly.
ENCODER_SCALES = (1.0, 1.0 / 16.0)
ENCODER_PREFIX = "enc:"
MIN_NGRAM_PROMPTS, MIN_NGRAM_SHARE = 5, 0.01  # an n-gram must be in this many prompts
LOW_SHARE, HIGH_SHARE = 0.5, 0.2  # as the shipped model: ~50 % low, ~20 % high


class OutcomesError(ValueError):
    """A line of the outcomes file is not what the format fixes."""


@dataclass(frozen=True, slots=True)
class JudgedPrompt:
    prompt: str
    weak_score: float
    strong_score: float


def read_outcomes(lines: Iterable[str], source: str = "outcomes") -> list[JudgedPrompt]:
    rows = []
    for number, row in json_lines(lines, source, OutcomesError):
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise OutcomesError(f"{source}:{number}: needs a string \"prompt\"")
        scores = [row.get("weak_score"), row.get("strong_score")]
        if not all(isinstance(s, int | float) and not isinstance(s, bool)
                   and math.isfinite(s) for s in scores):
            raise OutcomesError(
                f"{source}:{number}: \"weak_score\" and \"strong_score\" must be numbers")
        rows.append(JudgedPrompt(row["prompt"], float(scores[0]), float(scores[1])))
    return rows


def load_outcomes_file(path: Path) -> list[JudgedPrompt]:
    with path.open(encoding="utf-8") as lines:
        return read_outcomes(lines, str(path))


def fit_router(outcomes: Sequence[JudgedPrompt],
               complexity: EncoderComplexityModel | None = None,
               tasks: TaskModel | None = None) -> dict[str, Any]:
    """The router document: a calibrated logistic regression of "the strong model scored
    higher" that starts from the shipped models' scores and adapts to these outcomes.

    The shipped complexity score is penalised ~100x less than anything else, so with few
    outcomes (or a strong penalty) the fit stays close to the shipped ranking rescaled; the
    penalty is chosen by cross-validated log-loss on the outcomes themselves, so more outcomes
    buy more adaptation. Calibration (Platt) and thresholds come from out-of-fold scores."""
    if len(outcomes) < MIN_OUTCOMES:
        raise OutcomesError(f"need at least {MIN_OUTCOMES} outcomes, got {len(outcomes)}")
    won = np.array([o.strong_score > o.weak_score for o in outcomes], dtype=int)
    if won.min() == won.max():
        raise OutcomesError("the strong model won every prompt or none: nothing to learn")
    complexity = complexity or EncoderComplexityModel.load()
    tasks = tasks or TaskModel.load()
    full = _design(outcomes, complexity, tasks)
    design, penalty, oof = _choose_fit([full.with_encoder_scale(s) for s in ENCODER_SCALES],
                                       won)
    model = LogisticRegression(C=penalty, max_iter=5000).fit(design.x, won)
    platt = LogisticRegression(C=1.0).fit(oof.reshape(-1, 1), won)
    slope, offset = float(platt.coef_[0, 0]), float(platt.intercept_[0])
    if slope <= 0:  # the adapted score ranks backwards out of fold: keep it, uncalibrated
        slope, offset = 1.0, 0.0
    dense, ngrams, intercept = design.export(model, slope, offset)
    p_oof = 1.0 / (1.0 + np.exp(-(slope * oof + offset)))
    return {
        "format": ROUTER_FORMAT,
        "featurizer_version": FEATURIZER_VERSION,
        # Fitted on this table's vectors: refused beside another (router_model.py).
        "encoder": dict(complexity.document["encoder"]),
        "description": "p_strong = sigmoid(intercept + sum(dense[k] * input[k]) + sum(ngrams[g]"
                       " for g present)); inputs from gateway/classify/router_model.py",
        "intercept": round(intercept, 6),
        "dense": dense,
        "ngrams": ngrams,
        "thresholds": [round(float(np.quantile(p_oof, LOW_SHARE)), 4),
                       round(float(np.quantile(p_oof, 1 - HIGH_SHARE)), 4)],
        "training": {"outcomes": len(outcomes), "strong_won": int(won.sum()),
                     "penalty_c": penalty, "encoder_scale": design.encoder_scale,
                     "kept_ngrams": len(ngrams),
                     "calibration": {"slope": round(slope, 6), "offset": round(offset, 6)}},
    }


@dataclass(frozen=True, slots=True)
class _Design:
    """The fitting matrix: standardised dense inputs (the complexity score boosted), then
    n-gram presence scaled down; and how to fold weights back into raw-input weights."""

    x: sparse.csr_matrix
    dense_names: list[str]
    mean: np.ndarray
    spread: np.ndarray  # includes the boost: raw weight = coefficient / spread
    ngram_names: list[str]
    encoder_scale: float = 1.0

    def with_encoder_scale(self, scale: float) -> _Design:
        """The same inputs with every encoder column multiplied by `scale` (its weight then
        costs 1/scale² as much)."""
        if scale == self.encoder_scale:
            return self
        factor = scale / self.encoder_scale
        columns = np.array([factor if n.startswith(ENCODER_PREFIX) else 1.0
                            for n in self.dense_names] + [1.0] * len(self.ngram_names))
        x = sparse.csr_matrix(self.x.multiply(columns.reshape(1, -1)))
        spread = self.spread / columns[:len(self.dense_names)]
        return _Design(x, self.dense_names, self.mean, spread, self.ngram_names, scale)

    def export(self, model: LogisticRegression, slope: float, offset: float,
               ) -> tuple[dict[str, float], dict[str, float], float]:
        coef = model.coef_[0] * slope
        k = len(self.dense_names)
        raw = coef[:k] / self.spread
        intercept = float(model.intercept_[0] * slope + offset - (raw * self.mean).sum())
        dense = {n: round(float(w), 6) for n, w in zip(self.dense_names, raw, strict=True)
                 if abs(w) >= 1e-6}
        ngrams = {g: round(float(w) * NGRAM_SCALE, 5)
                  for g, w in zip(self.ngram_names, coef[k:], strict=True)
                  if abs(w) * NGRAM_SCALE >= 5e-4}
        return dense, ngrams, intercept


def _design(outcomes: Sequence[JudgedPrompt], complexity: EncoderComplexityModel,
            tasks: TaskModel) -> _Design:
    inputs = [router_inputs(o.prompt, complexity, tasks) for o in outcomes]
    dense_names = sorted({name for values, _ in inputs for name in values})
    dense = np.array([[values.get(n, 0.0) for n in dense_names] for values, _ in inputs])
    mean, spread = dense.mean(axis=0), dense.std(axis=0)
    spread[spread < 1e-6] = 1.0  # constant up to rounding: its column stays ~0, its weight too
    # The shipped score and its signals are cheap to keep or re-weigh (a traffic may
    # want the n-gram signal more and the contrast less); everything else pays the penalty.
    spread = spread / np.array([COMPLEXITY_BOOST if n in BOOSTED else 1.0
                                for n in dense_names])
    seen: Counter[str] = Counter()
    for _, ngrams in inputs:
        seen.update(ngrams)
    # Words in a handful of prompts only would be memorised, not learned.
    floor = max(MIN_NGRAM_PROMPTS, round(MIN_NGRAM_SHARE * len(outcomes)))
    ngram_names = sorted(g for g, count in seen.items() if count >= floor)
    column = {g: i for i, g in enumerate(ngram_names)}
    rows, cols = [], []
    for row, (_, ngrams) in enumerate(inputs):
        for g in ngrams:
            if g in column:
                rows.append(row)
                cols.append(column[g])
    words = sparse.csr_matrix((np.full(len(rows), NGRAM_SCALE), (rows, cols)),
                              shape=(len(outcomes), len(ngram_names)))
    x = sparse.hstack([sparse.csr_matrix((dense - mean) / spread), words], format="csr")
    return _Design(x, dense_names, mean, spread, ngram_names)


def _choose_fit(designs: Sequence[_Design], won: np.ndarray,
                ) -> tuple[_Design, float, np.ndarray]:
    """The design and penalty with the best out-of-fold log-loss (a proper score: it rewards
    ranking and calibration alike, and is far less noisy on a few hundred outcomes than
    APGR), and its out-of-fold linear scores."""
    folds = np.random.default_rng(0).permutation(len(won)) % FOLDS
    best: tuple[float, _Design, float, np.ndarray] | None = None
    for design in designs:
        for penalty in PENALTIES:
            oof = np.zeros(len(won))
            for fold in range(FOLDS):
                test = folds == fold
                if won[~test].min() == won[~test].max():
                    continue  # a fold with one class cannot be fitted; its scores stay 0
                model = LogisticRegression(C=penalty, max_iter=5000).fit(design.x[~test],
                                                                          won[~test])
                oof[test] = model.decision_function(design.x[test])
            # log(1 + e^-z) for a win, log(1 + e^z) for a loss, computed without overflow.
            loss = float(np.logaddexp(0.0, np.where(won == 1, -oof, oof)).mean())
            # Ties: the first tried (the stronger penalty, the full encoder block).
            if best is None or loss < best[0] - 1e-4:
                best = (loss, design, penalty, oof)
    if best is None:
        raise OutcomesError("no penalty could be fitted")
    return best[1], best[2], best[3]


def write_router(document: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ROUTER_FILE
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path
