"""A router fitted to one organisation's outcomes (`gateway router fit`): the shipped
complexity score and task type's log-probabilities (the starting point), adjusted by weights
on the complexity model's signals, the prompt's encoder vector, its dense measurements
and words, learned from that organisation's judged prompts. The router records the encoder
table it was fitted against and is refused beside another."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gateway.classify.complexity import classify, logistic
from gateway.classify.complexity_encoder import SIGNALS, EncoderComplexityModel
from gateway.classify.complexity_features import FEATURIZER_VERSION, extract_features
from gateway.classify.model_files import read_document
from gateway.classify.task_type import TaskModel
from gateway.types import TASK_TYPES, Complexity

ROUTER_FILE = "router.json"
ROUTER_FORMAT = "gateway-router-stacked/3"
COMPLEXITY_INPUT = "complexity_score"  # the shipped complexity model's z
SIGNAL_INPUTS = tuple(f"signal:{s}" for s in SIGNALS)  # its standardised signals
TASK_INPUTS = tuple(f"task:{t}" for t in TASK_TYPES)  # log p of each task type


class RouterModelError(ValueError):
    """The router directory is missing its file, or the file is malformed or out of date."""


def router_inputs(text: str, complexity: EncoderComplexityModel, tasks: TaskModel,
                  ) -> tuple[dict[str, float], frozenset[str] | set[str]]:
    """The named values the dense weights multiply, and the prompt's n-grams (one
    featurization and one encoding shared by the shipped models and the router)."""
    features = extract_features(text)
    vector = complexity.vector(text)
    signals = complexity.signals(text, vector)
    values = {COMPLEXITY_INPUT: complexity.combine(signals)}
    values.update(zip(SIGNAL_INPUTS, complexity.standardised(signals), strict=True))
    values.update((f"enc:{i}", float(v)) for i, v in enumerate(vector))
    for name, p in zip(TASK_INPUTS, tasks.probabilities(features), strict=True):
        values[name] = math.log(max(p, 1e-6))
    values.update(features.dense)
    return values, features.ngrams


class RouterModel:
    """p_strong = sigmoid(intercept + Σ dense[k] · input[k] + Σ ngrams[g] for g present)."""

    __slots__ = ("_complexity", "_dense", "_intercept", "_ngrams", "_tasks", "thresholds")

    def __init__(self, intercept: float, dense: dict[str, float], ngrams: dict[str, float],
                 thresholds: tuple[float, float],
                 complexity: EncoderComplexityModel | None = None,
                 tasks: TaskModel | None = None) -> None:
        self._intercept = intercept
        self._dense = dense
        self._ngrams = ngrams
        self.thresholds = thresholds
        # The shipped models unless told otherwise (benchmarks pass ones trained without the
        # data set they evaluate on).
        self._complexity = complexity or EncoderComplexityModel.load()
        self._tasks = tasks or TaskModel.load()

    @classmethod
    def load(cls, directory: Path) -> RouterModel:
        path = directory / ROUTER_FILE
        document = read_document(path, "router file", RouterModelError,
                                 missing=f"no router in {directory} (expected {path})")
        return cls.from_document(document)

    @classmethod
    def from_document(cls, document: dict[str, Any],
                      complexity: EncoderComplexityModel | None = None,
                      tasks: TaskModel | None = None) -> RouterModel:
        if not isinstance(document, dict) or document.get("format") != ROUTER_FORMAT:
            found = document.get("format") if isinstance(document, dict) else None
            raise RouterModelError(f"unknown router format {found!r}: fit it again with"
                                   " `gateway router fit`")
        if document.get("featurizer_version") != FEATURIZER_VERSION:
            raise RouterModelError("the router was fitted on other inputs than this version"
                                   " computes: fit it again with `gateway router fit`")
        try:
            low, high = (float(t) for t in document["thresholds"])
            dense = {str(k): float(w) for k, w in document["dense"].items()}
            ngrams = {str(k): float(w) for k, w in document["ngrams"].items()}
            intercept = float(document["intercept"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RouterModelError(f"malformed router: {exc!r}") from exc
        if not all(math.isfinite(w) for w in (intercept, *dense.values(), *ngrams.values())):
            raise RouterModelError("malformed router: a weight is not finite")
        complexity = complexity or EncoderComplexityModel.load()
        fitted = document.get("encoder")
        if not isinstance(fitted, dict) or fitted.get("digest") != complexity.encoder_digest:
            name = fitted.get("name") if isinstance(fitted, dict) else None
            raise RouterModelError(
                f"the router was fitted against encoder table {name!r}, not the table in use"
                f" ({complexity.encoder_digest[:12]}): fit it again with `gateway router fit`")
        return cls(intercept, dense, ngrams, (low, high), complexity, tasks)

    def score(self, text: str) -> float:
        """The linear score (log-odds of p_strong)."""
        values, ngrams = router_inputs(text, self._complexity, self._tasks)
        z = self._intercept
        dense = self._dense
        for name, value in values.items():
            z += dense.get(name, 0.0) * value
        table = self._ngrams
        for ngram in ngrams & table.keys():  # set intersection in C; few matches reach Python
            z += table[ngram]
        return z

    def p_strong(self, text: str) -> float:
        return logistic(self.score(text))

    def assess(self, text: str) -> Complexity:
        p = self.p_strong(text)
        return Complexity(p_strong=p, label=classify(p, self.thresholds))
