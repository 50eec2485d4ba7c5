"""Task types: the shipped model, the scoring arithmetic, and what a bad model file gets."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from gateway.classify.complexity_features import (
    FEATURIZER_VERSION,
    HEAD_CHARS,
    TAIL_CHARS,
    extract_features,
)
from gateway.classify.standard import standard_classifier
from gateway.classify.task_type import (
    DEFAULT_TASK_MODEL_PATH,
    TASK_MODEL_FORMAT,
    TaskModel,
    TaskModelError,
)
from gateway.offline.training.task_type_train import Labelled, TaskTrainConfig, bootstrap_ci, fit
from gateway.types import TASK_TYPES, Endpoint, RouteRequest


def tiny(**changes: Any) -> dict[str, Any]:
    """A hand-written model: "python" votes code, "translate" votes translation."""
    width = len(TASK_TYPES)

    def row(**weights: float) -> list[float]:
        return [weights.get(t, 0.0) for t in TASK_TYPES]

    document = {
        "format": TASK_MODEL_FORMAT,
        "featurizer": {"version": FEATURIZER_VERSION, "head_chars": HEAD_CHARS,
                       "tail_chars": TAIL_CHARS},
        "classes": list(TASK_TYPES),
        "intercept": row(chat=1.0),
        "ngrams": {"python": row(code=3.0), "translate": row(translation=3.0),
                   "translate python": row(code=-1.0, translation=1.0)},
        "dense": {"#mcq": row(knowledge=5.0)},
    }
    assert len(document["intercept"]) == width
    document.update(changes)
    return document


def test_the_score_is_intercept_plus_matched_ngrams_softmaxed() -> None:
    model = TaskModel.from_document(tiny())
    assert model.assess("hello there").type == "chat"
    code = model.assess("fix my python")
    # code 3, chat 1, nine others 0: softmax by hand.
    expected = math.exp(3) / (math.exp(3) + math.e + 9)
    assert code.type == "code" and code.p == pytest.approx(expected)
    # "translate python": translation 3 + 1 = 4 beats code 3 - 1 = 2.
    assert model.assess("translate python").type == "translation"
    probabilities = model.probabilities(extract_features("translate python"))
    assert sum(probabilities) == pytest.approx(1.0) and len(probabilities) == len(TASK_TYPES)


def test_a_lead_ngram_weighs_only_at_the_start() -> None:
    lead = {"^translate": [3.0 if t == "translation" else 0.0 for t in TASK_TYPES]}
    model = TaskModel.from_document(tiny(ngrams=lead))
    assert model.assess("Translate this: bonjour").type == "translation"
    assert model.assess("Could you translate this: bonjour").type == "chat"


def test_lettered_options_count_as_the_mcq_feature() -> None:
    model = TaskModel.from_document(tiny())
    question = "Which planet is largest?\nA. Mars\nB. Jupiter\nC. Venus\nD. Earth\nAnswer:"
    assert model.assess(question).type == "knowledge"
    assert model.assess("Which planet is largest?").type == "chat"


@pytest.mark.parametrize("change, message", [
    ({"format": "other/1"}, "unknown task model format"),
    ({"featurizer": {"version": -1}}, "featurizer"),
    ({"classes": list(reversed(TASK_TYPES))}, "taxonomy"),
    ({"intercept": [0.0, 1.0]}, "entries"),
    ({"ngrams": {"python": ["x"] * len(TASK_TYPES)}}, "malformed"),
])
def test_a_model_for_another_featurizer_or_taxonomy_is_refused(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(TaskModelError, match=message):
        TaskModel.from_document(tiny(**change))


def test_missing_or_broken_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(TaskModelError, match="not found"):
        TaskModel.load(tmp_path / "none.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(TaskModelError, match="not valid JSON"):
        TaskModel.load(broken)


def test_the_shipped_model_is_package_data_over_the_whole_taxonomy() -> None:
    document = json.loads(DEFAULT_TASK_MODEL_PATH.read_text(encoding="utf-8"))
    assert document["classes"] == list(TASK_TYPES)
    model = TaskModel.load()
    assert model is TaskModel.load()  # parsed once per process


# Written for this test, none of them in training/task_types: plain cases of each kind.
PLAIN = [
    ("Write a Python function that checks whether a string is a palindrome.", "code"),
    ("Translate into Spanish: the library opens at nine.", "translation"),
    ("hi, how are you?", "chat"),
    ("Solve for x: 5x - 3 = 12.", "math"),
    ("Pretend you are a pirate captain and greet my crew.", "roleplay"),
    ("Summarize the following article in two sentences: The museum reopened...", "summarization"),
    ("Write a short poem about the sea at night.", "writing"),
    ("Stay in character as a grumpy wizard for this whole chat. Who are you?", "roleplay"),
    ("List every product name and its price from this invoice as JSON: 2 lamps at $40...",
     "extraction"),
]


@pytest.mark.parametrize("prompt, task", PLAIN)
def test_the_shipped_model_gets_plain_cases_right(prompt: str, task: str) -> None:
    found = TaskModel.load().assess(prompt)
    assert found.type == task, found
    assert 0 < found.p <= 1


def test_training_exports_a_model_that_reads_back_and_learns_its_examples() -> None:
    rows = [Labelled("authored", p, t) for p, t in [
        ("def add(a, b): return a + b  # fix this python", "code"),
        ("python class with a bug in the loop", "code"),
        ("my python script crashes on import", "code"),
        ("translate this to german please", "translation"),
        ("translate the menu to french", "translation"),
        ("translate good night into italian", "translation"),
    ]]
    document = fit(rows, TaskTrainConfig(c=10.0))
    json.loads(json.dumps(document))  # plain JSON
    model = TaskModel.from_document(copy.deepcopy(document))
    assert model.assess("a python function please").type == "code"
    assert model.assess("translate it to spanish").type == "translation"
    assert document["training"]["examples"] == {"authored": 6}


def test_the_bootstrap_interval_brackets_the_mean() -> None:
    hits = [True] * 80 + [False] * 20
    low, high = bootstrap_ci(hits)
    assert low < 0.8 < high and 0.7 < low and high < 0.9


async def test_the_profile_carries_the_task_of_the_last_user_message() -> None:
    classifier = standard_classifier()
    chat = {"messages": [
        {"role": "user", "content": "Translate into German: good morning."},
        {"role": "assistant", "content": "Guten Morgen."},
        {"role": "user", "content": "Now write a Python function that reverses a list."},
    ]}
    profile = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", chat))
    assert profile.task is not None and profile.task.type == "code"
    assert profile.complexity is not None
    embedding = await classifier.profile(
        RouteRequest("r", Endpoint.EMBEDDINGS, "m", {"input": "write python code"}))
    assert embedding.task is None and embedding.complexity is None


def test_one_featurization_serves_both_models_of_the_same_text() -> None:
    text = "Write a Python function that reverses a list, please."
    assert extract_features(text) is extract_features(text)
    # An equal text in another object is featurized afresh, to equal features.
    other = "".join(list(text))
    assert other is not text and extract_features(other) == extract_features(text)
