"""A router fitted to one organisation's outcomes (`gateway router fit`): the shipped
complexity score, the task type's log-probabilities and prompt length, combined by weights
learned on that organisation's judged prompts. Numpy-free, sklearn-free inference."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from gateway.classify.complexity import ComplexityModel, classify
from gateway.classify.complexity_features import FEATURIZER_VERSION, extract_features
from gateway.classify.task_type import TaskModel
from gateway.types import TASK_TYPES, Complexity

ROUTER_FILE = "router.json"
ROUTER_FORMAT = "gateway-router-stacked/1"
# Inputs, in weight order: the shipped complexity model's linear score, log p of each task
# type, and log prompt length. Few enough that a few hundred outcomes fit them without
# memorising prompts; the shipped models carry what is learned from the words.
INPUTS = ("complexity_score", *(f"task:{t}" for t in TASK_TYPES), "#len")


class RouterModelError(ValueError):
    """The router directory is missing its file, or the file is malformed or out of date."""


def router_inputs(text: str, complexity: ComplexityModel, tasks: TaskModel) -> list[float]:
    """The values the weights multiply, in INPUTS order (one featurization for all)."""
    features = extract_features(text)
    log_p = [math.log(max(p, 1e-6)) for p in tasks.probabilities(features)]
    return [complexity.score(text), *log_p, features.dense["#len"]]


class RouterModel:
    """p_strong = sigmoid(intercept + weights · router_inputs(text))."""

    __slots__ = ("_complexity", "_intercept", "_tasks", "_weights", "thresholds")

    def __init__(self, intercept: float, weights: list[float],
                 thresholds: tuple[float, float]) -> None:
        self._intercept = intercept
        self._weights = weights
        self.thresholds = thresholds
        self._complexity = ComplexityModel.load()
        self._tasks = TaskModel.load()

    @classmethod
    def load(cls, directory: Path) -> RouterModel:
        path = directory / ROUTER_FILE
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise RouterModelError(f"no router in {directory} (expected {path})") from exc
        except json.JSONDecodeError as exc:
            raise RouterModelError(f"router file is not valid JSON: {path}: {exc}") from exc
        return cls.from_document(document)

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> RouterModel:
        if document.get("format") != ROUTER_FORMAT:
            raise RouterModelError(f"unknown router format {document.get('format')!r}")
        if document.get("inputs") != list(INPUTS) or (
                document.get("featurizer_version") != FEATURIZER_VERSION):
            raise RouterModelError("the router was fitted on other inputs than this version"
                                   " computes: fit it again with `gateway router fit`")
        try:
            low, high = (float(t) for t in document["thresholds"])
            weights = [float(w) for w in document["weights"]]
            intercept = float(document["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RouterModelError(f"malformed router: {exc!r}") from exc
        if len(weights) != len(INPUTS):
            raise RouterModelError(f"expected {len(INPUTS)} weights, got {len(weights)}")
        return cls(intercept, weights, (low, high))

    def p_strong(self, text: str) -> float:
        inputs = router_inputs(text, self._complexity, self._tasks)
        z = self._intercept + sum(w * x for w, x in zip(self._weights, inputs, strict=True))
        if z >= 0:  # split by sign so exp never overflows
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)

    def assess(self, text: str) -> Complexity:
        p = self.p_strong(text)
        return Complexity(p_strong=p, label=classify(p, self.thresholds))
