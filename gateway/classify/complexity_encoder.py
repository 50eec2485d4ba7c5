"""The shipped complexity model: p_strong from the static encoder's vector and the existing
prompt features together. Four signals, each standardised on a reference mix of real user
requests and summed with fixed weights, then calibrated to a probability:

- `depth`: how far into specialist territory the prompt's subject lies (the cheap model's
  error rate on MMLU subjects, learned from the encoder vector);
- `contrast`: how much it reads like prompts people chose as hard (Arena-Hard) rather than
  ordinary requests (encoder vector ⊕ dense features);
- `ngram`: the n-gram model trained on MMLU/GSM8K outcomes (knowledge and arithmetic the
  cheap model gets wrong), with a full vote on multiple-choice prompts and half on others;
- `outcome`: where the strong model did better than the cheap one on judged outcomes
  (MMLU, GSM8K, Arena-Bench; encoder vector ⊕ dense features), voting on multiple-choice
  prompts only.
"""

from __future__ import annotations

import base64
import hashlib
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from gateway.classify.complexity import ComplexityModel, classify, logistic
from gateway.classify.complexity_features import FORMATS, extract_features
from gateway.classify.encoder_paths import DEFAULT_COMPLEXITY_PATH
from gateway.classify.model_files import check_featurizer, read_document
from gateway.classify.static_encoder import EncoderInfo, EncoderTableError, StaticEncoder
from gateway.types import Complexity

DEFAULT_MODEL_PATH = DEFAULT_COMPLEXITY_PATH
MODEL_FORMAT = "gateway-complexity-encoder/2"  # /2: the outcome signal
SIGNALS = ("depth", "contrast", "ngram", "outcome")
ENCODER_HEADS = ("depth", "contrast", "outcome")  # the signals linear in the encoder vector


class SentenceEncoder(Protocol):
    """A prompt → unit vector: the static table (shipped) or the full MiniLM (accurate mode)."""

    @property
    def info(self) -> EncoderInfo: ...

    @property
    def dims(self) -> int: ...

    def encode(self, text: str) -> np.ndarray: ...

    def encode_many(self, texts: list[str]) -> np.ndarray: ...


class EncoderModelError(ValueError):
    """The model file is missing or malformed, or was built for another encoder table."""


@dataclass(frozen=True, slots=True)
class Signals:
    """One prompt's four raw scores, before standardising (evaluation and `classify`)."""

    depth: float
    contrast: float
    ngram: float
    outcome: float
    fmt: str

    def values(self) -> tuple[float, float, float, float]:
        """The raw scores in SIGNALS' order."""
        return self.depth, self.contrast, self.ngram, self.outcome


class EncoderComplexityModel:
    """z = Σ weight[fmt][s] · (signal_s − mean_s) / sd_s;  p_strong = σ(slope · z + bias).

    Each head's own bias is recorded in the file but unused: standardising on the reference
    mix absorbs any constant."""

    __slots__ = ("_calibration", "_combine", "_dense", "_encoder", "_heads", "_ngram", "_scale",
                 "document", "thresholds")

    def __init__(self, document: dict[str, Any], encoder: SentenceEncoder,
                 ngram: ComplexityModel) -> None:
        try:
            # The three signals read off the encoder vector, as rows of one matrix: one
            # product a request, whichever of them its format's mix weighs.
            self._heads = np.stack([_vector(document[h]["weights"], encoder.dims)
                                    for h in ENCODER_HEADS])
            # Dense feature -> (contrast weight, outcome weight); depth reads none.
            contrast_dense = document["contrast"]["dense"]
            outcome_dense = document["outcome"]["dense"]
            self._dense = {str(k): (float(contrast_dense.get(k, 0.0)),
                                    float(outcome_dense.get(k, 0.0)))
                           for k in (*contrast_dense, *outcome_dense)}
            biases = (float(document["depth"]["bias"]), float(document["contrast"]["bias"]),
                      float(document["outcome"]["bias"]))
            self._scale = {s: (float(document["standardise"][s][0]),
                               float(document["standardise"][s][1])) for s in SIGNALS}
            self._combine = {f: tuple(float(document["combine"][f][s]) for s in SIGNALS)
                             for f in FORMATS}
            self._calibration = (float(document["calibration"]["slope"]),
                                 float(document["calibration"]["intercept"]))
            low, high = (float(t) for t in document["thresholds"])
            weighted = _weighted(encoder, document.get("token_weights"))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EncoderModelError(f"malformed complexity model: {exc!r}") from exc
        numbers = [*biases, *(v for pair in self._scale.values() for v in pair),
                   *(w for ws in self._combine.values() for w in ws), *self._calibration,
                   *(w for pair in self._dense.values() for w in pair), low, high]
        if not all(map(math.isfinite, numbers)) or min(sd for _, sd in self._scale.values()) <= 0:
            raise EncoderModelError("malformed complexity model: a number is not finite")
        self._encoder = weighted
        self._ngram = ngram
        self.thresholds = (low, high)
        self.document = document

    @classmethod
    def load(cls, path: Path | None = None, encoder: SentenceEncoder | None = None,
             ngram: ComplexityModel | None = None) -> EncoderComplexityModel:
        """The shipped model (read once per process), or the one at `path`."""
        if path is None and encoder is None and ngram is None:
            return _load_cached(DEFAULT_MODEL_PATH)
        return _load(path or DEFAULT_MODEL_PATH, encoder, ngram)

    @classmethod
    def from_document(cls, document: Any, encoder: SentenceEncoder | None = None,
                      ngram: ComplexityModel | None = None) -> EncoderComplexityModel:
        if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
            found = document.get("format") if isinstance(document, dict) else None
            raise EncoderModelError(f"unknown complexity model format {found!r} (expected"
                                    f" {MODEL_FORMAT!r}): retrain it with"
                                    " `gateway classifier train-complexity`")
        check_featurizer(document, "complexity model", EncoderModelError,
                         "gateway classifier train-complexity")
        if encoder is None:
            try:
                encoder = StaticEncoder.load()
            except EncoderTableError as exc:
                raise EncoderModelError(str(exc)) from exc
        wanted = document.get("encoder", {})
        if not isinstance(wanted, dict) or wanted.get("digest") != encoder.info.digest:
            raise EncoderModelError(
                f"the complexity model was trained on encoder table"
                f" {wanted.get('name') if isinstance(wanted, dict) else wanted!r}, not on the"
                f" table in use ({encoder.info.name}, {encoder.info.digest[:12]}): retrain it"
                " with `gateway classifier train-complexity`")
        return cls(document, encoder, ngram or ComplexityModel.load())

    @property
    def encoder_digest(self) -> str:
        return self._encoder.info.digest

    def p_strong_of(self, text: str, vector: np.ndarray) -> float:
        """p_strong given the prompt's vector, computed elsewhere (the accurate mode's pool)."""
        return self._calibrated(self.combine(self.signals(text, vector)))

    def vector(self, text: str) -> np.ndarray:
        """The prompt's encoder vector, with this model's token weights (fitted routers read
        it as 256 more inputs)."""
        return self._encoder.encode(text)

    def signals(self, text: str, vector: np.ndarray | None = None) -> Signals:
        if vector is None:
            vector = self._encoder.encode(text)
        features = extract_features(text)
        depth, contrast, outcome = (self._heads @ vector).tolist()
        for name, value in features.dense.items():
            weights = self._dense.get(name) if value else None  # most features are 0
            if weights is not None:
                contrast += weights[0] * value
                outcome += weights[1] * value
        return Signals(depth, contrast, self._ngram.score(text), outcome, features.fmt)

    def standardised(self, signals: Signals) -> tuple[float, ...]:
        """Each signal in SIGNALS' order, standardised on the reference mix."""
        out = []
        for name, value in zip(SIGNALS, signals.values(), strict=True):
            mean, sd = self._scale[name]
            out.append((value - mean) / sd)
        return tuple(out)

    def score(self, text: str) -> float:
        """z: the weighted sum of standardised signals (ranks as p_strong does)."""
        return self.combine(self.signals(text))

    def combine(self, signals: Signals) -> float:
        weights = self._combine[signals.fmt]
        return sum(w * v for w, v in zip(weights, self.standardised(signals), strict=True))

    def p_strong(self, text: str) -> float:
        return self._calibrated(self.score(text))

    def _calibrated(self, z: float) -> float:
        slope, intercept = self._calibration
        return logistic(slope * z + intercept)

    def assess(self, text: str) -> Complexity:
        p = self.p_strong(text)
        return Complexity(p_strong=p, label=classify(p, self.thresholds))


def encode_token_weights(weights: np.ndarray) -> dict[str, str]:
    """float16 token weights as base64 in the JSON, with a digest (reviewable, one file)."""
    raw = weights.astype("<f2").tobytes()
    return {"dtype": "float16", "base64": base64.b64encode(raw).decode("ascii"),
            "sha256": hashlib.sha256(raw).hexdigest()}


def _weighted(encoder: SentenceEncoder, entry: dict[str, str] | None) -> SentenceEncoder:
    """The encoder with the model's token weights (static tables only: a model over the full
    encoder has none)."""
    if entry is None:
        return encoder
    if not isinstance(encoder, StaticEncoder):
        raise ValueError("token weights need the static encoder table")
    return encoder.with_token_weights(_token_weights(entry, encoder.vocab_size))


def _token_weights(entry: dict[str, str], vocab_size: int) -> np.ndarray:
    raw = base64.b64decode(entry["base64"], validate=True)
    if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
        raise ValueError("token weights do not match their digest")
    weights = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if weights.shape != (vocab_size,) or not np.all(np.isfinite(weights)):
        raise ValueError(f"{weights.shape[0]} token weights for {vocab_size} tokens")
    return weights


def _vector(values: list[float], dims: int) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    if vector.shape != (dims,) or not np.all(np.isfinite(vector)):
        raise ValueError(f"a weight vector of {vector.shape} where ({dims},) was expected")
    return vector


def _load(path: Path, encoder: SentenceEncoder | None,
          ngram: ComplexityModel | None) -> EncoderComplexityModel:
    document = read_document(path, "complexity model", EncoderModelError)
    return EncoderComplexityModel.from_document(document, encoder, ngram)


@cache
def _load_cached(path: Path) -> EncoderComplexityModel:
    return _load(path, None, None)
