"""Trains the shipped complexity model (classify/complexity_encoder.py) and exports its JSON.

Offline only (scikit-learn is imported here, never on the request path). Data, all openly
licensed: RouteLLM's MMLU/GSM8K outcomes and Arena-Bench judgments (../shared/data/routing),
Arena-Hard v0.1 prompts (hard by their authors' selection) and the team's expert requests
(short as well as long: hard is not long) against ordinary requests (Self-Instruct's seed
tasks, the team's chat prompts, everyday programming and technical questions), and
Self-Instruct's user-oriented requests as the reference mix the classes are cut on. The
outcome sets teach the outcome signal as well as the n-gram model and the depth signal."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import cross_val_predict

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_encoder import (
    MODEL_FORMAT,
    SIGNALS,
    EncoderComplexityModel,
    SentenceEncoder,
    encode_token_weights,
)
from gateway.classify.complexity_features import FORMATS, MCQ, extract_features
from gateway.classify.model_files import FEATURIZER
from gateway.classify.static_encoder import EncoderInfo, StaticEncoder

ROUTING = Path("routing")
HARD_FILES = ("arena_hard_v01_tasks.jsonl", "authored_expert_requests.jsonl",
              "authored_multilingual_expert.jsonl", "authored_short_hard.jsonl")
ORDINARY_FILES = ("self_instruct_seed_tasks.jsonl", "authored_chat_2.jsonl",
                  "authored_chat.jsonl", "authored_everyday_code.jsonl",
                  "authored_everyday_technical.jsonl", "authored_multilingual_everyday.jsonl",
                  "authored_short_everyday.jsonl")
REFERENCE_FILES = ("self_instruct_user_oriented.jsonl", "alpaca_eval_oasst_hh_tasks.jsonl")
EXPORT_TOLERANCE = 1e-3  # in z; the export rounds weights to 6 significant digits


@dataclass(frozen=True, slots=True)
class Judged:
    """A prompt with both models' scores (correctness 0/1, or a judge's 1–10)."""

    dataset: str  # "mmlu" | "gsm8k" | "arena"
    prompt: str
    weak: float
    strong: float
    subject: str = ""  # MMLU's subject


@dataclass(frozen=True, slots=True)
class EncoderTrainConfig:
    sif: float = 1e-4  # token weight a / (a + relative frequency): common words count less
    depth_alpha: float = 100.0  # ridge penalty, on standardised encoder dimensions
    contrast_c: float = 0.03  # inverse L2 penalty, on standardised inputs
    contrast_exclude: tuple[str, ...] = ()  # dense features (by prefix) the contrast ignores
    outcome_c: float = 0.03  # the outcome signal's inverse L2 penalty, as the contrast's
    # Fixed, not fitted: outcomes on MMLU/GSM8K reward only the n-gram model (they hold no
    # open-ended requests), so fitting the mix on them would drown the two chat signals. Each
    # signal votes where it was trained: the contrast learned from free-form requests only,
    # so it has no vote on multiple-choice questions; the n-gram model, mostly a length prior
    # on chat, half a vote on free text. The outcome signal votes on multiple choice only:
    # its free-text outcomes are mostly Arena-Bench's (code-heavy, the strong model ahead)
    # and GSM8K's, so on free text it rates everyday programming questions as hard, which
    # the contrast was just taught not to do.
    combine: dict[str, dict[str, float]] = field(default_factory=lambda: {
        MCQ: {"depth": 1.0, "contrast": 0.0, "ngram": 1.0, "outcome": 1.0},
        "free": {"depth": 1.0, "contrast": 1.0, "ngram": 0.5, "outcome": 0.0},
    })
    low_share: float = 0.5  # "low": the easiest half of the reference mix
    high_share: float = 0.2  # "high": its hardest fifth
    folds: int = 5


@dataclass(frozen=True, slots=True)
class TrainingData:
    outcomes: list[Judged]
    hard: list[str]
    ordinary: list[str]
    reference: list[str]

    def without(self, dataset: str) -> TrainingData:
        """The same data less one outcome set (leave-one-dataset-out evaluation)."""
        return TrainingData([o for o in self.outcomes if o.dataset != dataset], self.hard,
                            self.ordinary, self.reference)

    def corpus(self) -> list[str]:
        return [o.prompt for o in self.outcomes] + self.hard + self.ordinary


def load_training_data(data_root: Path, prompts_dir: Path) -> TrainingData:
    outcomes: list[Judged] = []
    with (data_root / ROUTING / "routellm_mmlu_gsm8k.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            outcomes.append(Judged(row["benchmark"], row["prompt"], float(row["weak_score"]),
                                   float(row["strong_score"]), row.get("subject") or ""))
    with (data_root / ROUTING / "arena_bench_v1_judgments.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            outcomes.append(Judged("arena", row["prompt"], float(row["weak_score"]),
                                   float(row["strong_score"])))
    return TrainingData(outcomes, _prompts(prompts_dir, HARD_FILES),
                        _prompts(prompts_dir, ORDINARY_FILES),
                        _prompts(prompts_dir, REFERENCE_FILES))


def _prompts(folder: Path, names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        with (folder / name).open(encoding="utf-8") as lines:
            out += [json.loads(line)["prompt"] for line in lines if line.strip()]
    return out


def token_weights(encoder: StaticEncoder, corpus: Sequence[str], sif: float) -> np.ndarray:
    counts: Counter[int] = Counter()
    for text in corpus:
        counts.update(encoder.token_ids(text))
    total = max(1, sum(counts.values()))
    frequency = np.zeros(encoder.vocab_size)
    for token, n in counts.items():
        frequency[token] = n / total
    return sif / (sif + frequency)


def train_encoder_model(data: TrainingData, config: EncoderTrainConfig,
                        encoder: SentenceEncoder | None = None,
                        ngram: ComplexityModel | None = None) -> dict[str, Any]:
    """Fit every part and export; returns the JSON document the model loads. The static
    table gets token weights (its mean would otherwise be the common words'); the full
    encoder pools with its own attention and gets none."""
    encoder = encoder or StaticEncoder.load()
    ngram = ngram or ComplexityModel.load()
    weighted: SentenceEncoder = encoder
    token_entry = None
    if isinstance(encoder, StaticEncoder):
        weights = token_weights(encoder, data.corpus(), config.sif).astype(np.float16)
        weighted = encoder.with_token_weights(weights.astype(np.float32))
        token_entry = encode_token_weights(weights)
    else:  # milliseconds a prompt: each prompt is encoded once, in batches, and remembered
        weighted = encoder = Remembered(encoder)
        mmlu = [_stem(o.prompt) for o in data.outcomes if o.dataset == "mmlu"]
        encoder.encode_many([*data.corpus(), *data.reference, *mmlu])
    depth = _fit_depth(weighted, [o for o in data.outcomes if o.dataset == "mmlu"], config)
    contrast = _fit_contrast(weighted, data.hard, data.ordinary, config)
    outcome = _fit_outcome(weighted, data.outcomes, config)
    document: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "description": __doc__.split("\n\n")[0] if __doc__ else "",
        "featurizer": FEATURIZER,
        "encoder": {"name": encoder.info.name, "digest": encoder.info.digest},
        "token_weights": token_entry,
        "depth": depth,
        "contrast": contrast,
        "outcome": outcome,
        "standardise": {s: [0.0, 1.0] for s in SIGNALS},
        "combine": {f: dict(config.combine[f]) for f in FORMATS},
        "calibration": {"slope": 1.0, "intercept": 0.0},
        "thresholds": [0.0, 1.0],
    }
    # Standardise each signal on the reference mix (real requests, never trained on).
    model = EncoderComplexityModel.from_document(document, encoder, ngram)
    reference = np.array([_raw(model, p) for p in data.reference])
    # A signal with nothing to learn from (depth without MMLU) is constant: sd 1 keeps it 0.
    document["standardise"] = {s: [_round(reference[:, i].mean()),
                                   _round(reference[:, i].std() or 1.0)]
                               for i, s in enumerate(SIGNALS)}
    model = EncoderComplexityModel.from_document(document, encoder, ngram)
    document["calibration"] = _calibrate(model, data, weighted, config)
    model = EncoderComplexityModel.from_document(document, encoder, ngram)
    p_reference = np.array([model.p_strong(p) for p in data.reference])
    document["thresholds"] = [_round(np.quantile(p_reference, config.low_share)),
                              _round(np.quantile(p_reference, 1.0 - config.high_share))]
    document["training"] = {
        "config": asdict(config),
        "outcomes": dict(Counter(o.dataset for o in data.outcomes)),
        "hard": list(HARD_FILES), "ordinary": list(ORDINARY_FILES),
        "reference": {"files": list(REFERENCE_FILES), "prompts": len(data.reference),
                      "quantiles": [config.low_share, 1.0 - config.high_share]},
    }
    return document


class Remembered:
    """A slow encoder whose vectors are computed once per distinct text, in batches."""

    def __init__(self, encoder: SentenceEncoder, batch: int = 64) -> None:
        self._encoder = encoder
        self._batch = batch
        self._seen: dict[str, np.ndarray] = {}

    @property
    def info(self) -> EncoderInfo:
        return self._encoder.info

    @property
    def dims(self) -> int:
        return self._encoder.dims

    def encode(self, text: str) -> np.ndarray:
        return self.encode_many([text])[0]

    def encode_many(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        for start in range(0, len(missing), self._batch):
            part = missing[start:start + self._batch]
            self._seen.update(zip(part, self._encoder.encode_many(part), strict=True))
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([self._seen[t] for t in texts])


def _raw(model: EncoderComplexityModel, text: str) -> tuple[float, float, float, float]:
    return model.signals(text).values()


def _fit_depth(encoder: SentenceEncoder, mmlu: Sequence[Judged],
               config: EncoderTrainConfig) -> dict[str, Any]:
    """Ridge from the question's stem (options cut off) to its subject's weak-model error
    rate: subject-level targets are far less noisy than one question's right or wrong."""
    if not mmlu:  # left out (evaluation): the signal contributes a constant
        return {"weights": [0.0] * encoder.dims, "bias": 0.0, "target": "none"}
    by_subject: dict[str, list[float]] = defaultdict(list)
    for o in mmlu:
        by_subject[o.subject].append(o.weak)
    error = {s: 1.0 - float(np.mean(v)) for s, v in by_subject.items()}
    x = encoder.encode_many([_stem(o.prompt) for o in mmlu])
    y = np.array([error[o.subject] for o in mmlu])
    mean, sd = x.mean(axis=0), x.std(axis=0) + 1e-6
    ridge = Ridge(alpha=config.depth_alpha).fit((x - mean) / sd, y)
    w = ridge.coef_ / sd
    return {"weights": [_round(v) for v in w], "bias": _round(ridge.intercept_ - w @ mean),
            "target": "the weak model's error rate on the question's MMLU subject"}


def _stem(prompt: str) -> str:
    cut = prompt.find("\nA.")
    return prompt[:cut] if cut > 0 else prompt


def _contrast_rows(encoder: SentenceEncoder, prompts: Sequence[str],
                   names: Sequence[str]) -> np.ndarray:
    dense = [extract_features(p).dense for p in prompts]
    return np.hstack([encoder.encode_many(list(prompts)),
                      np.array([[d.get(n, 0.0) for n in names] for d in dense])])


def _dense_names(prompts: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    return sorted({n for p in prompts for n in extract_features(p).dense
                   if not n.startswith(tuple(exclude))})


def _fit_contrast(encoder: SentenceEncoder, hard: Sequence[str], ordinary: Sequence[str],
                  config: EncoderTrainConfig) -> dict[str, Any]:
    prompts = [*hard, *ordinary]
    y = np.r_[np.ones(len(hard)), np.zeros(len(ordinary))]
    return _logistic_head(encoder, prompts, y, _dense_names(prompts, config.contrast_exclude),
                          _contrast_estimator(config), None,
                          "Arena-Hard v0.1 and expert requests (1) against ordinary requests"
                          " (0), balanced")


def _contrast_estimator(config: EncoderTrainConfig) -> LogisticRegression:
    """The contrast's regression, as fitted and as cross-validated for calibration."""
    return LogisticRegression(C=config.contrast_c, max_iter=5000, class_weight="balanced")


def _fit_outcome(encoder: SentenceEncoder, outcomes: Sequence[Judged],
                 config: EncoderTrainConfig) -> dict[str, Any]:
    """Logistic regression from encoder vector ⊕ dense features to "the strong model scored
    higher", on every outcome row given; each data set weighs alike and, within it, each
    class alike (so a set's base rate teaches nothing, only what differs inside it)."""
    prompts = [o.prompt for o in outcomes]
    y = np.array([o.strong > o.weak for o in outcomes], dtype=float)
    sets = np.array([o.dataset for o in outcomes])
    weight = np.zeros(len(outcomes))
    for dataset in sorted(set(sets)):
        for label in (0.0, 1.0):
            rows = (sets == dataset) & (y == label)
            weight[rows] = 1.0 / max(1, int(rows.sum()))
    return _logistic_head(encoder, prompts, y, _dense_names(prompts),
                          LogisticRegression(C=config.outcome_c, max_iter=5000),
                          weight / weight.mean(),
                          "the strong model scored higher than the cheap one (MMLU, GSM8K,"
                          " Arena-Bench outcomes), each set and class weighted alike")


def _logistic_head(encoder: SentenceEncoder, prompts: Sequence[str], y: np.ndarray,
                   names: Sequence[str], model: LogisticRegression,
                   sample_weight: np.ndarray | None, target: str) -> dict[str, Any]:
    """A head over encoder vector ⊕ dense features: fitted on standardised inputs (so the
    penalty treats every input alike), exported as weights on the raw ones."""
    x = _contrast_rows(encoder, prompts, names)
    mean, sd = x.mean(axis=0), x.std(axis=0) + 1e-6
    model.fit((x - mean) / sd, y, sample_weight=sample_weight)
    w = model.coef_[0] / sd
    dims = encoder.dims
    return {"weights": [_round(v) for v in w[:dims]],
            "dense": {n: _round(v) for n, v in zip(names, w[dims:], strict=True)},
            "bias": _round(float(model.intercept_[0]) - w @ mean),
            "target": target}


def _calibrate(model: EncoderComplexityModel, data: TrainingData, encoder: SentenceEncoder,
               config: EncoderTrainConfig) -> dict[str, float]:
    """Platt scaling of z against "the strong model is needed", every source weighted alike:
    each outcome set (the strong model scored higher) and the hard/ordinary contrast, whose
    rows are scored out of fold (in-sample contrast scores would overstate the slope)."""
    z: list[np.ndarray] = []
    y: list[np.ndarray] = []
    w: list[np.ndarray] = []
    for dataset in sorted({o.dataset for o in data.outcomes}):
        rows = [o for o in data.outcomes if o.dataset == dataset]
        z.append(np.array([model.score(o.prompt) for o in rows]))
        y.append(np.array([o.strong > o.weak for o in rows], dtype=float))
        w.append(np.full(len(rows), 1.0 / len(rows)))
    prompts = [*data.hard, *data.ordinary]
    labels = np.r_[np.ones(len(data.hard)), np.zeros(len(data.ordinary))]
    z.append(_out_of_fold_z(model, encoder, prompts, labels, config))
    y.append(labels)
    w.append(np.full(len(prompts), 1.0 / len(prompts)))
    weights = np.concatenate(w)
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(
        np.concatenate(z).reshape(-1, 1), np.concatenate(y),
        sample_weight=weights / weights.mean())
    slope = float(platt.coef_[0, 0])
    if slope <= 0:
        raise RuntimeError("calibration slope is not positive: z does not rank the target")
    return {"slope": _round(slope), "intercept": _round(float(platt.intercept_[0]))}


def _out_of_fold_z(model: EncoderComplexityModel, encoder: SentenceEncoder,
                   prompts: Sequence[str], labels: np.ndarray,
                   config: EncoderTrainConfig) -> np.ndarray:
    names = _dense_names(prompts, config.contrast_exclude)
    x = _contrast_rows(encoder, prompts, names)
    mean, sd = x.mean(axis=0), x.std(axis=0) + 1e-6
    oof = cross_val_predict(_contrast_estimator(config), (x - mean) / sd, labels,
                            cv=config.folds, method="decision_function")
    z = np.empty(len(prompts))
    c_mean, c_sd = model.document["standardise"]["contrast"]
    bias = model.document["contrast"]["bias"]
    for i, text in enumerate(prompts):
        signals = model.signals(text)
        values = dict(zip(SIGNALS, model.standardised(signals), strict=True))
        # Swap the in-sample contrast for its out-of-fold score (decision_function includes
        # an intercept; the raw signal does not, so the full fit's bias comes off).
        values["contrast"] = (float(oof[i]) - bias - c_mean) / c_sd
        weights = model.document["combine"][signals.fmt]
        z[i] = sum(weights[s] * values[s] for s in SIGNALS)
    return z


def check_export(document: dict[str, Any], encoder: SentenceEncoder, ngram: ComplexityModel,
                 prompts: Sequence[str], expected: np.ndarray) -> None:
    """The written file, re-read by the serving code, scores as the trainer did."""
    model = EncoderComplexityModel.from_document(json.loads(json.dumps(document)),
                                                 encoder, ngram)
    worst = max(abs(model.score(p) - e) for p, e in zip(prompts, expected, strict=True))
    if worst > EXPORT_TOLERANCE:
        raise RuntimeError(f"exported model disagrees with the trained one by {worst:.5f}")


def write_model(document: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _round(value: float) -> float:
    return float(f"{float(value):.6g}")
