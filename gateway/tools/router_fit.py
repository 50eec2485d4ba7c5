"""Fits a router (router_model.RouterModel) to judged outcomes: JSON lines
`{"prompt", "weak_score", "strong_score"}` (optional `id`, `weak_model`, `strong_model`;
scores on any scale, higher is better). Offline only: scikit-learn is imported here."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_features import FEATURIZER_VERSION
from gateway.classify.router_model import INPUTS, ROUTER_FILE, ROUTER_FORMAT, router_inputs
from gateway.classify.task_type import TaskModel

MIN_OUTCOMES = 20
PENALTY_C = 0.5  # strong enough that a few hundred outcomes cannot chase noise
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
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise OutcomesError(f"{source}:{number}: not JSON: {exc}") from None
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


def fit_router(outcomes: list[JudgedPrompt]) -> dict[str, Any]:
    """The router document: a calibrated logistic regression of "the strong model scored
    higher" on the shipped models' outputs for each prompt."""
    if len(outcomes) < MIN_OUTCOMES:
        raise OutcomesError(f"need at least {MIN_OUTCOMES} outcomes, got {len(outcomes)}")
    won = np.array([o.strong_score > o.weak_score for o in outcomes], dtype=int)
    if won.min() == won.max():
        raise OutcomesError("the strong model won every prompt or none: nothing to learn")
    complexity, tasks = ComplexityModel.load(), TaskModel.load()
    x = np.array([router_inputs(o.prompt, complexity, tasks) for o in outcomes])
    # Standardised for one penalty over all inputs, folded back into raw weights on export.
    mean, spread = x.mean(axis=0), x.std(axis=0)
    spread[spread == 0] = 1.0
    model = LogisticRegression(C=PENALTY_C, max_iter=2000).fit((x - mean) / spread, won)
    weights = model.coef_[0] / spread
    intercept = float(model.intercept_[0] - (weights * mean).sum())
    p = model.predict_proba((x - mean) / spread)[:, 1]
    return {
        "format": ROUTER_FORMAT,
        "featurizer_version": FEATURIZER_VERSION,
        "inputs": list(INPUTS),
        "intercept": round(intercept, 6),
        "weights": [round(float(w), 6) for w in weights],
        "thresholds": [round(float(np.quantile(p, LOW_SHARE)), 4),
                       round(float(np.quantile(p, 1 - HIGH_SHARE)), 4)],
        "training": {"outcomes": len(outcomes), "strong_won": int(won.sum())},
    }


def write_router(document: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ROUTER_FILE
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path
