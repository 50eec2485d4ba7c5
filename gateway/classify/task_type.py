"""Per-request task type (code, math, writing, ...) from a multinomial linear model over the
same cheap prompt features as the complexity model. Numpy-free, sklearn-free inference."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from gateway.classify.complexity_features import MCQ, PromptFeatures, extract_features
from gateway.classify.model_files import check_featurizer, read_document
from gateway.types import TASK_TYPES, Task

DEFAULT_TASK_MODEL_PATH = Path(__file__).parent / "models" / "task_type.json"
TASK_MODEL_FORMAT = "gateway-task-linear/1"
MCQ_FEATURE = "#mcq"  # the prompt lists lettered answer options


class TaskModelError(ValueError):
    """The model file is missing, malformed, or was built for another featurizer/taxonomy."""


class TaskModel:
    """Softmax over one linear score per task type, read from reviewable JSON."""

    __slots__ = ("_dense", "_intercept", "_last", "_ngrams")

    def __init__(
        self,
        intercept: list[float],
        ngrams: dict[str, list[float]],
        dense: dict[str, list[float]],
    ) -> None:
        self._intercept = intercept
        self._ngrams = ngrams  # n-gram → one weight per task type, in TASK_TYPES order
        self._dense = dense
        # The last features scored and their probabilities: a fitted router reads them, then
        # the profiler asks for the task of the same question. Keyed by identity, replaced
        # whole, so a concurrent caller can only miss it (as extract_features' cache).
        self._last: tuple[PromptFeatures, list[float]] | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> TaskModel:
        """The shipped model (parsed once per process and shared), or the model at `path`."""
        if path is None:
            return _load_cached(DEFAULT_TASK_MODEL_PATH)
        return _load(path)

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> TaskModel:
        if document.get("format") != TASK_MODEL_FORMAT:
            raise TaskModelError(f"unknown task model format {document.get('format')!r}")
        check_featurizer(document, "task model", TaskModelError,
                         "gateway classifier train-tasks")
        if tuple(document.get("classes", ())) != TASK_TYPES:
            raise TaskModelError(f"task model classes {document.get('classes')} are not"
                                 f" the taxonomy {list(TASK_TYPES)}")
        width = len(TASK_TYPES)
        try:
            intercept = [float(w) for w in document["intercept"]]
            ngrams = {k: [float(w) for w in ws] for k, ws in document["ngrams"].items()}
            dense = {k: [float(w) for w in ws] for k, ws in document["dense"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TaskModelError(f"malformed task model: {exc!r}") from exc
        if any(len(ws) != width for ws in (intercept, *ngrams.values(), *dense.values())):
            raise TaskModelError(f"every weight row must have {width} entries")
        return cls(intercept, ngrams, dense)

    def scores(self, features: PromptFeatures) -> list[float]:
        """One linear score per task type (log-odds up to a shared constant)."""
        table = self._ngrams
        # Column sums over the matched rows run in C (zip and sum), not per weight in Python.
        rows = [table[g] for g in features.ngrams & table.keys()]
        rows.append(self._intercept)
        if features.fmt == MCQ and MCQ_FEATURE in self._dense:
            rows.append(self._dense[MCQ_FEATURE])
        dense = self._dense
        for name, value in features.dense.items():
            # Most dense features are 0 for a given prompt (no code, no options...): a row of
            # zeros changes no sum, and skipping it saves a list per feature and task type.
            if not value:
                continue
            weights = dense.get(name)
            if weights is not None:
                rows.append([w * value for w in weights])
        return [sum(column) for column in zip(*rows, strict=True)]

    def probabilities(self, features: PromptFeatures) -> list[float]:
        last = self._last
        if last is not None and last[0] is features:
            return last[1]
        scores = self.scores(features)
        top = max(scores)  # subtracted so exp never overflows
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        probabilities = [e / total for e in exps]
        self._last = (features, probabilities)
        return probabilities

    def assess_features(self, features: PromptFeatures) -> Task:
        probabilities = self.probabilities(features)
        best = max(range(len(probabilities)), key=probabilities.__getitem__)
        return Task(type=TASK_TYPES[best], p=probabilities[best])

    def assess(self, text: str) -> Task:
        """The most likely task type of `text` and its probability."""
        return self.assess_features(extract_features(text))


def _load(path: Path) -> TaskModel:
    return TaskModel.from_document(read_document(path, "task model", TaskModelError))


@cache
def _load_cached(path: Path) -> TaskModel:
    # Parsed once per process: the JSON is immutable and the model holds no per-request state.
    return _load(path)
