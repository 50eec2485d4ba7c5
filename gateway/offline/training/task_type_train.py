"""Trains the task-type model on labelled prompts and exports it as JSON; measures accuracy.

Offline only (scikit-learn is imported here, never on the request path). Labelled prompts
come from three places (see training/task_types/README.md): prompts written and labelled for
this project, MMLU and GSM8K prompts labelled by their benchmark and subject, and Arena-Bench
chat prompts labelled by hand (the labels are in the repository, the prompts are read from
the shared data by question id).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from gateway.classify.complexity_features import (
    FEATURIZER_VERSION,
    HEAD_CHARS,
    MCQ,
    TAIL_CHARS,
    extract_features,
)
from gateway.classify.task_type import MCQ_FEATURE, TASK_MODEL_FORMAT
from gateway.types import TASK_TYPES

DEFAULT_LABELS_DIR = Path("training") / "task_types"
AUTHORED_FILES = ("authored.jsonl", "authored_chat.jsonl", "authored_chat_2.jsonl",
                  "authored_multilingual.jsonl", "authored_latex_math.jsonl")
# Self-instruct's 175 human-written seed tasks (Apache-2.0), labelled for this project by two
# blind passes; the 173 both passes agree on are trained on.
SEED_TASKS_FILE = "self_instruct_seed_tasks.jsonl"
# Arena-Hard-Auto v0.1's 500 Chatbot Arena prompts (Apache-2.0) less the 2 also in the shared
# Arena-Bench set, labelled the same way; the 489 both passes agree on are trained on.
ARENA_HARD_FILE = "arena_hard_v01_tasks.jsonl"
# AlpacaEval's (Apache-2.0) OpenAssistant (Apache-2.0) and Anthropic HH helpful-base (MIT)
# prompts, 317 questions real users asked, labelled the same way; the agreed ones are trained on.
ALPACA_EVAL_FILE = "alpaca_eval_oasst_hh_tasks.jsonl"
PUBLIC_FILES = ((SEED_TASKS_FILE, "self_instruct"), (ARENA_HARD_FILE, "arena_hard"),
                (ALPACA_EVAL_FILE, "oasst_hh"))
ARENA_LABELS_FILE = "arena_bench_v1_labels.jsonl"
# MT-Bench's 80 first-turn questions with the category its authors gave each (evaluation only:
# labels made independently of this project and its classifier; never trained on).
MT_BENCH_FILE = "mt_bench_questions.jsonl"
# Vicuna-bench's 80 questions, likewise labelled by their authors; 70 whose category maps onto
# the taxonomy one to one (evaluation only, never trained on).
VICUNA_FILE = "vicuna_bench_questions.jsonl"
# Self-instruct's 252 user-oriented instructions (Apache-2.0; their authors ask that they never
# be trained on): prompts written by third parties, labelled for this project by two blind
# passes that saw neither each other's labels nor the model (`task` and `task_second`).
USER_ORIENTED_FILE = "self_instruct_user_oriented.jsonl"
# Arena-Hard-Auto v2.0's 750 Chatbot Arena prompts with the subcategory their authors gave
# each (coding → code, math, creative_writing → writing) in `task`, and this project's labels
# from two blind passes in `blind_task` and `blind_task_second`; evaluation only, never
# trained on.
ARENA_HARD_V2_FILE = "arena_hard_v2_questions.jsonl"
ROUTELLM_FILE = Path("routing") / "routellm_mmlu_gsm8k.jsonl"
ARENA_FILE = Path("routing") / "arena_bench_v1_judgments.jsonl"
MMLU_MATH = frozenset(("abstract_algebra", "college_mathematics", "elementary_mathematics",
                       "high_school_mathematics", "high_school_statistics"))
MMLU_REASONING = frozenset(("formal_logic", "logical_fallacies"))
MIN_DOCS = 2  # an n-gram seen in one training prompt only is memorisation, not signal
EXPORT_DROP = 1e-3  # weights rows whose largest |w| is below this add nothing


@dataclass(frozen=True, slots=True)
class Labelled:
    source: str  # authored, a PUBLIC_FILES source, mmlu, gsm8k, arena, or a test set
    prompt: str
    task: str


@dataclass(frozen=True, slots=True)
class TaskTrainConfig:
    seed: int = 0
    c: float = 4.0  # inverse ridge penalty (4 beat 1 on arena cross-validation: 0.61 vs 0.58)
    mmlu_per_subject: int = 6  # MMLU is one format: a few per subject teach "knowledge"
    gsm8k_rows: int = 120


@dataclass(frozen=True, slots=True)
class TaskData:
    authored: list[Labelled]  # labelled for this project: written for it, or public prompts
    benchmark: list[Labelled]  # the sampled MMLU/GSM8K rows used for training
    benchmark_rest: list[Labelled]  # the rest, for an in-distribution check
    arena: list[Labelled]
    mt_bench: list[Labelled] = field(default_factory=list)  # evaluation only
    vicuna: list[Labelled] = field(default_factory=list)  # evaluation only
    # Evaluation only: the first labelling pass, and the rows both passes agree on.
    user_oriented: list[Labelled] = field(default_factory=list)
    user_oriented_agreed: list[Labelled] = field(default_factory=list)
    arena_hard_v2: list[Labelled] = field(default_factory=list)  # evaluation only
    # The same prompts where both blind passes agree, labelled with that agreed type, and
    # the authors' label of each (the two label sets follow different conventions).
    arena_hard_v2_blind: list[Labelled] = field(default_factory=list)
    arena_hard_v2_authors_of_blind: list[str] = field(default_factory=list)


def load_task_data(labels_dir: Path, data_root: Path, config: TaskTrainConfig,
                   evaluation_dir: Path | None = None) -> TaskData:
    """Every labelled prompt, with MMLU/GSM8K sampled (seeded) into train and rest.
    `evaluation_dir`: where MT-Bench's questions live, outside the training folder (default:
    the repository's evaluation/ beside training/)."""
    evaluation_dir = evaluation_dir or labels_dir.parent.parent / "evaluation"
    authored = [Labelled("authored", row["prompt"], row["task"])
                for name in AUTHORED_FILES for row in _read_jsonl(labels_dir / name)]
    authored += [Labelled(source, row["prompt"], row["task"]) for name, source in PUBLIC_FILES
                 for row in _read_if_present(labels_dir / name)]
    labels = {row["question_id"]: row["task"]
              for row in _read_jsonl(labels_dir / ARENA_LABELS_FILE)}
    arena = [Labelled("arena", row["prompt"], labels[row["question_id"]])
             for row in _read_jsonl(data_root / ARENA_FILE) if row["question_id"] in labels]
    by_subject: dict[str, list[Labelled]] = {}
    for row in _read_jsonl(data_root / ROUTELLM_FILE):
        if row["benchmark"] == "gsm8k":
            by_subject.setdefault("gsm8k", []).append(Labelled("gsm8k", row["prompt"], "math"))
            continue
        subject = row["subject"]
        task = ("math" if subject in MMLU_MATH
                else "reasoning" if subject in MMLU_REASONING else "knowledge")
        by_subject.setdefault(subject, []).append(Labelled("mmlu", row["prompt"], task))
    rng = random.Random(config.seed)
    train: list[Labelled] = []
    rest: list[Labelled] = []
    for subject in sorted(by_subject):
        rows = by_subject[subject]
        rng.shuffle(rows)
        take = config.gsm8k_rows if subject == "gsm8k" else config.mmlu_per_subject
        train += rows[:take]
        rest += rows[take:]
    user_oriented = _read_if_present(labels_dir / USER_ORIENTED_FILE)
    arena_hard_v2 = _read_if_present(labels_dir / ARENA_HARD_V2_FILE)
    blind_agreed = _agreed(arena_hard_v2, "blind_task", "blind_task_second")
    data = TaskData(
        authored, train, rest, arena,
        mt_bench=_evaluation_set(evaluation_dir / MT_BENCH_FILE, "mt_bench"),
        vicuna=_evaluation_set(labels_dir / VICUNA_FILE, "vicuna_bench"),
        user_oriented=_labelled(user_oriented, "user_oriented"),
        user_oriented_agreed=_labelled(_agreed(user_oriented, "task", "task_second"),
                                       "user_oriented"),
        arena_hard_v2=_labelled(arena_hard_v2, "arena_hard_v2"),
        arena_hard_v2_blind=[Labelled("arena_hard_v2", row["prompt"], row["blind_task"])
                             for row in blind_agreed],
        arena_hard_v2_authors_of_blind=[row["task"] for row in blind_agreed],
    )
    # A label outside the taxonomy would train a class that cannot exist or score a held-out
    # prompt as missed whatever the model says: refused, in every set.
    for rows in (authored, arena, data.mt_bench, data.vicuna, data.user_oriented,
                 data.arena_hard_v2, data.arena_hard_v2_blind):
        for row in rows:
            if row.task not in TASK_TYPES:
                raise ValueError(f"label {row.task!r} is not in the taxonomy {TASK_TYPES}")
    return data


def _evaluation_set(path: Path, source: str) -> list[Labelled]:
    """A held-out set, or [] where the folder does not hold it."""
    return _labelled(_read_if_present(path), source)


def _agreed(rows: Sequence[dict[str, Any]], first: str, second: str) -> list[dict[str, Any]]:
    """The rows two labelling passes gave the same type (rows without them are skipped)."""
    return [row for row in rows if row.get(first) and row[first] == row.get(second)]


def _labelled(rows: Sequence[dict[str, Any]], source: str) -> list[Labelled]:
    return [Labelled(source, row["prompt"], row["task"]) for row in rows]


def _read_if_present(path: Path) -> list[dict[str, Any]]:
    return _read_jsonl(path) if path.is_file() else []


def feature_dict(prompt: str) -> dict[str, float]:
    """The features TaskModel.scores reads, as one sparse dict for DictVectorizer."""
    features = extract_features(prompt)
    row = dict.fromkeys(features.ngrams, 1.0)
    row.update(features.dense)
    row[MCQ_FEATURE] = float(features.fmt == MCQ)
    return row


def vectorize(rows: Sequence[Labelled]) -> tuple[DictVectorizer, Any]:
    """The training matrix of `rows` and the vectorizer that made it: every dense feature,
    and the n-grams seen in at least MIN_DOCS prompts."""
    dicts = [feature_dict(r.prompt) for r in rows]
    seen = Counter(k for d in dicts for k in d if not k.startswith("#"))
    dicts = [{k: v for k, v in d.items() if k.startswith("#") or seen[k] >= MIN_DOCS}
             for d in dicts]
    vectorizer = DictVectorizer()
    return vectorizer, vectorizer.fit_transform(dicts)


def fit(rows: Sequence[Labelled], config: TaskTrainConfig) -> dict[str, Any]:
    """The model document for `rows` (the JSON TaskModel.from_document reads)."""
    vectorizer, x = vectorize(rows)
    y = np.array([TASK_TYPES.index(r.task) for r in rows])
    model = LogisticRegression(C=config.c, class_weight="balanced", max_iter=3000)
    model.fit(x, y)
    # Classes missing from the data get no column; give them a very low intercept instead.
    width = len(TASK_TYPES)
    coef = np.zeros((x.shape[1], width))
    intercept = np.full(width, -30.0)
    weights, biases = model.coef_, model.intercept_
    if len(model.classes_) == 2:
        # Binary: one score for the second class; ±half of it gives the same softmax.
        weights = np.vstack([-weights[0] / 2, weights[0] / 2])
        biases = np.array([-biases[0] / 2, biases[0] / 2])
    for column, cls in enumerate(model.classes_):
        coef[:, cls] = weights[column]
        intercept[cls] = biases[column]
    ngrams: dict[str, list[float]] = {}
    dense: dict[str, list[float]] = {}
    for name, weights in zip(vectorizer.feature_names_, coef, strict=True):
        if np.abs(weights).max() < EXPORT_DROP:
            continue
        (dense if name.startswith("#") else ngrams)[name] = [round(float(w), 4) for w in weights]
    return {
        "format": TASK_MODEL_FORMAT,
        "featurizer": {"version": FEATURIZER_VERSION, "head_chars": HEAD_CHARS,
                       "tail_chars": TAIL_CHARS},
        "classes": list(TASK_TYPES),
        "intercept": [round(float(w), 4) for w in intercept],
        "ngrams": dict(sorted(ngrams.items())),
        "dense": dict(sorted(dense.items())),
        "training": {"config": {"seed": config.seed, "c": config.c,
                                "mmlu_per_subject": config.mmlu_per_subject,
                                "gsm8k_rows": config.gsm8k_rows},
                     "examples": dict(sorted(Counter(r.source for r in rows).items()))},
    }


def write_task_model(document: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")


def bootstrap_ci(hits: Sequence[bool], seed: int = 0, draws: int = 2000,
                 level: float = 0.90) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `hits`."""
    values = np.asarray(hits, dtype=float)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(draws, len(values)))].mean(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"not found: {path}")
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]
