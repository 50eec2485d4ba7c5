"""Fits the task-type model to one organisation's own labelled prompts: the shipped model
adapted, not a blank start, so a few hundred labels already help.

Offline only (numpy and scipy, never on the request path). The adapted model keeps the
shipped model's format and features; `GATEWAY_TASK_MODEL` (or `gateway classify
--task-model`) points the gateway at it. How: the softmax's cross-entropy on the new prompts,
plus a ridge penalty that pulls every weight towards the base model's value instead of
towards 0 (a Gaussian prior centred on the base model). Weights of features the new prompts
never show keep their base value exactly; features the base model never learned start at 0.
The organisation's own mix of types is its traffic's prior, so it is not rebalanced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

from gateway.offline.training.json_lines import json_lines
from gateway.offline.training.task_type_train import EXPORT_DROP, MIN_DOCS, Labelled, feature_dict
from gateway.types import TASK_TYPES

DEFAULT_C = 4.0  # the shipped recipe's inverse penalty: one labelled prompt, four pulls


@dataclass(frozen=True, slots=True)
class TaskFitConfig:
    c: float = DEFAULT_C
    max_iter: int = 500


class LabelledFileError(ValueError):
    """A labelled-prompts file that cannot be read as `{"prompt", "task"}` lines."""


def read_labelled(path: Path) -> list[Labelled]:
    """`{"prompt": str, "task": one of TASK_TYPES}` per line (other keys ignored); every
    problem is named with its line."""
    try:
        rows = _labelled_rows(path)
    except UnicodeDecodeError as exc:
        raise LabelledFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    if not rows:
        raise LabelledFileError(f"{path}: no labelled prompts")
    return rows


def _labelled_rows(path: Path) -> list[Labelled]:
    rows: list[Labelled] = []
    with path.open(encoding="utf-8") as lines:
        for number, row in json_lines(lines, str(path), LabelledFileError):
            prompt, task = (row.get("prompt"), row.get("task")) if isinstance(row, dict) \
                else (None, None)
            if not isinstance(prompt, str) or not prompt.strip():
                raise LabelledFileError(f"{path}:{number}: needs a non-empty string 'prompt'")
            if task not in TASK_TYPES:
                raise LabelledFileError(
                    f"{path}:{number}: 'task' must be one of {', '.join(TASK_TYPES)};"
                    f" got {task!r}")
            rows.append(Labelled("own", prompt, task))
    return rows


def fit_to_labels(base: dict[str, Any], rows: Sequence[Labelled],
                  config: TaskFitConfig = TaskFitConfig()) -> dict[str, Any]:
    """The model document of `base` adapted to `rows` (the JSON TaskModel.from_document
    reads)."""
    dicts = [feature_dict(r.prompt) for r in rows]
    seen = Counter(k for d in dicts for k in d if not k.startswith("#"))
    ngrams, dense = base["ngrams"], base["dense"]
    # Features the base model knows are fitted wherever they occur; new n-grams only where
    # several prompts share them (one prompt's words are memorisation, not signal).
    names = sorted({k for d in dicts for k in d
                    if k.startswith("#") or k in ngrams or seen[k] >= MIN_DOCS})
    column = {name: i for i, name in enumerate(names)}
    x = _matrix(dicts, column)
    width = len(TASK_TYPES)
    prior = np.array([ngrams.get(n) or dense.get(n) or [0.0] * width for n in names])
    y = np.eye(width)[[TASK_TYPES.index(r.task) for r in rows]]
    # The intercepts are pulled towards the base model's too: a sample of one or two types
    # must not make every prompt one of them.
    start = np.concatenate([prior.ravel(), np.asarray(base["intercept"], dtype=float)])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        weights = theta[:-width].reshape(len(names), width)
        scores = x @ weights + theta[-width:]
        scores -= scores.max(axis=1, keepdims=True)
        log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
        error = np.exp(log_p) - y  # d(cross-entropy)/d(scores)
        pull = theta - start
        value = config.c * -(y * log_p).sum() + 0.5 * float(pull @ pull)
        gradient = np.concatenate([(config.c * (x.T @ error)).ravel(),
                                   config.c * error.sum(axis=0)]) + pull
        return float(value), gradient

    result = minimize(loss, start, jac=True, method="L-BFGS-B",
                      options={"maxiter": config.max_iter})
    fitted = result.x[:-width].reshape(len(names), width)
    return _document(base, names, fitted, result.x[-width:], rows, config)


def _matrix(dicts: list[dict[str, float]], column: dict[str, int]) -> sparse.csr_matrix:
    data, rows, cols = [], [], []
    for i, d in enumerate(dicts):
        for name, value in d.items():
            j = column.get(name)
            if j is not None and value:
                data.append(value)
                rows.append(i)
                cols.append(j)
    return sparse.csr_matrix((data, (rows, cols)), shape=(len(dicts), len(column)))


def _document(base: dict[str, Any], names: list[str], fitted: np.ndarray,
              intercept: np.ndarray, rows: Sequence[Labelled],
              config: TaskFitConfig) -> dict[str, Any]:
    ngrams = dict(base["ngrams"])
    dense = dict(base["dense"])
    for name, weights in zip(names, fitted, strict=True):
        table = dense if name.startswith("#") else ngrams
        if np.abs(weights).max() < EXPORT_DROP:
            table.pop(name, None)
        else:
            table[name] = [round(float(w), 4) for w in weights]
    return {
        **base,
        "intercept": [round(float(w), 4) for w in intercept],
        "ngrams": dict(sorted(ngrams.items())),
        "dense": dict(sorted(dense.items())),
        "adapted": {"examples": dict(sorted(Counter(r.task for r in rows).items())),
                    "c": config.c, "base_training": base.get("training")},
    }
