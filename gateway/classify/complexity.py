"""Per-request complexity: the probability that the cheap model fails where the strong one
succeeds (`p_strong`), and its low/medium/high class. Numpy-free, sklearn-free inference."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from gateway.classify.complexity_features import FORMATS, extract_features
from gateway.classify.model_files import check_featurizer, read_document
from gateway.types import Complexity

DEFAULT_MODEL_PATH = Path(__file__).parent / "models" / "complexity.json"
MODEL_FORMAT = "gateway-complexity-linear/1"

# Out-of-fold p_strong quantiles 0.5 and 0.8 on the shipped model's training prompts, so about
# 50 % of them are "low", 30 % "medium", 20 % "high" (the model JSON records the same values
# under "thresholds"; a unit test keeps the two equal). On held-out data the shares move with
# the mix of prompts: that is the point of a class, not a defect.
DEFAULT_THRESHOLDS: tuple[float, float] = (0.1922, 0.2466)


class ComplexityModelError(ValueError):
    """The model file is missing, malformed, or was built for another featurizer."""


class ComplexityModel:
    """A linear model over `extract_features`, read from reviewable JSON."""

    __slots__ = ("_dense", "_intercept", "_ngrams", "thresholds")

    def __init__(
        self,
        intercept: dict[str, float],
        ngrams: dict[str, dict[str, float]],
        dense: dict[str, dict[str, float]],
        thresholds: tuple[float, float] = DEFAULT_THRESHOLDS,
    ) -> None:
        self._intercept = intercept
        self._ngrams = ngrams
        self._dense = dense
        self.thresholds = thresholds

    @classmethod
    def load(cls, path: Path | None = None) -> ComplexityModel:
        """The shipped model (parsed once per process and shared), or the model at `path`."""
        if path is None:
            return _load_cached(DEFAULT_MODEL_PATH)
        return _load(path)

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> ComplexityModel:
        if document.get("format") != MODEL_FORMAT:
            raise ComplexityModelError(f"unknown model format {document.get('format')!r}")
        check_featurizer(document, "complexity model", ComplexityModelError,
                         "gateway classifier train")
        try:
            low, high = (float(t) for t in document["thresholds"])
            return cls(
                intercept={f: float(document["intercept"][f]) for f in FORMATS},
                ngrams={f: {k: float(w) for k, w in document["ngrams"][f].items()}
                        for f in FORMATS},
                dense={f: {k: float(w) for k, w in document["dense"][f].items()}
                       for f in FORMATS},
                thresholds=(low, high),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ComplexityModelError(f"malformed complexity model: {exc!r}") from exc

    def score(self, text: str) -> float:
        """The linear score (log-odds of p_strong); ranks prompts exactly as p_strong does."""
        features = extract_features(text)
        table = self._ngrams[features.fmt]
        z = self._intercept[features.fmt]
        # Set intersection runs in C over the smaller side; only matched n-grams reach Python.
        for ngram in features.ngrams & table.keys():
            z += table[ngram]
        weights = self._dense[features.fmt]
        for name, value in features.dense.items():
            z += weights.get(name, 0.0) * value
        return z

    def p_strong(self, text: str) -> float:
        return logistic(self.score(text))

    def assess(self, text: str) -> Complexity:
        """p_strong and its class under this model's thresholds, as the request Profile wants."""
        p = self.p_strong(text)
        return Complexity(p_strong=p, label=classify(p, self.thresholds))


def logistic(z: float) -> float:
    """1 / (1 + e^-z), split by sign so exp never overflows on extreme scores."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def classify(p: float, thresholds: tuple[float, float] = DEFAULT_THRESHOLDS) -> str:
    """"low" if p < t0, "medium" if p < t1, else "high"."""
    low, high = thresholds
    if low > high:
        raise ValueError(f"thresholds must be ordered, got {thresholds}")
    if p < low:
        return "low"
    if p < high:
        return "medium"
    return "high"


def _load(path: Path) -> ComplexityModel:
    return ComplexityModel.from_document(
        read_document(path, "complexity model", ComplexityModelError))


@cache
def _load_cached(path: Path) -> ComplexityModel:
    # Parsed once per process: the JSON is immutable and the model holds no per-request state.
    return _load(path)
