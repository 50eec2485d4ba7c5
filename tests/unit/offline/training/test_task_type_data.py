"""The task-type training data: what load_task_data reads, and that the sets it evaluates on
never leak into the prompts it trains on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gateway.offline.training.task_type_train import (
    ARENA_FILE,
    ARENA_HARD_V2_FILE,
    ARENA_LABELS_FILE,
    AUTHORED_FILES,
    MT_BENCH_FILE,
    PUBLIC_FILES,
    USER_ORIENTED_FILE,
    VICUNA_FILE,
    TaskTrainConfig,
    load_task_data,
)
from gateway.types import TASK_TYPES

LABELS = Path(__file__).parents[4] / "training" / "task_types"
EVALUATION = Path(__file__).parents[4] / "evaluation"  # MT-Bench: sealed-check material
SHARED_DATA = Path(__file__).parents[5] / "shared" / "data"
HELD_OUT = (MT_BENCH_FILE, VICUNA_FILE, USER_ORIENTED_FILE, ARENA_HARD_V2_FILE)


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _hard_v2(prompt: str, authors: str, *blind: str) -> dict[str, str]:
    """An Arena-Hard v2.0 row: the authors' label, and the two blind passes' where given."""
    return {"prompt": prompt, "task": authors,
            **dict(zip(("blind_task", "blind_task_second"), blind, strict=False))}


def _corpus(tmp_path: Path, authored_task: str = "code") -> tuple[Path, Path]:
    labels, data = tmp_path / "labels", tmp_path / "data"
    for name in AUTHORED_FILES:
        _write(labels / name, [{"prompt": f"fix my {name}", "task": authored_task}])
    _write(labels / ARENA_LABELS_FILE, [{"question_id": "q1", "task": "chat"}])
    _write(data / "routing" / "arena_bench_v1_judgments.jsonl",
           [{"question_id": "q1", "prompt": "hello"}, {"question_id": "q2", "prompt": "x"}])
    _write(data / "routing" / "routellm_mmlu_gsm8k.jsonl", [
        {"benchmark": "gsm8k", "prompt": "2 + 2?"},
        {"benchmark": "mmlu", "subject": "formal_logic", "prompt": "p implies q?"},
        {"benchmark": "mmlu", "subject": "anatomy", "prompt": "where is the femur?"},
    ])
    return labels, data


def test_evaluation_sets_are_read_when_present_and_empty_when_not(tmp_path: Path) -> None:
    labels, data = _corpus(tmp_path)
    config = TaskTrainConfig(mmlu_per_subject=1, gsm8k_rows=1)
    without = load_task_data(labels, data, config)
    assert without.mt_bench == [] and without.vicuna == []
    assert [r.task for r in without.arena] == ["chat"]  # unlabelled arena rows are skipped
    assert sorted(r.task for r in without.benchmark) == ["knowledge", "math", "reasoning"]

    _write(labels / VICUNA_FILE, [{"question_id": 61, "category": "coding",
                                   "prompt": "Implement a queue.", "task": "code"}])
    _write(tmp_path / "evaluation" / MT_BENCH_FILE, [
        {"question_id": 81, "category": "writing", "prompt": "Compose a blog post.",
         "task": "writing"}])
    _write(labels / USER_ORIENTED_FILE, [
        {"id": "u1", "prompt": "Fix the grammar: me go home", "task": "writing",
         "task_second": "writing"},
        {"id": "u2", "prompt": "Is this review positive? Great!", "task": "extraction",
         "task_second": "knowledge"},
    ])
    all_sets = load_task_data(labels, data, config, evaluation_dir=tmp_path / "evaluation")
    assert [(r.source, r.task) for r in all_sets.vicuna] == [("vicuna_bench", "code")]
    assert [(r.source, r.task) for r in all_sets.mt_bench] == [("mt_bench", "writing")]
    # The first pass is scored whole; the agreed rows are the ones both passes labelled alike.
    assert [r.task for r in all_sets.user_oriented] == ["writing", "extraction"]
    assert [r.task for r in all_sets.user_oriented_agreed] == ["writing"]


def test_arena_hard_v2_keeps_the_authors_labels_and_the_agreed_blind_ones(
        tmp_path: Path) -> None:
    labels, data = _corpus(tmp_path)
    _write(labels / ARENA_HARD_V2_FILE, [
        _hard_v2("Prove that sqrt 2 is irrational.", "math", "math", "math"),
        _hard_v2("Write a Python function for primes.", "math", "code", "code"),
        _hard_v2("A riddle with numbers", "math", "reasoning", "math"),
        _hard_v2("A poem about rain.", "writing"),  # not labelled blind
    ])
    sets = load_task_data(labels, data, TaskTrainConfig())
    assert [r.task for r in sets.arena_hard_v2] == ["math", "math", "math", "writing"]
    # Only the rows both blind passes agree on, each beside its authors' label.
    assert [r.task for r in sets.arena_hard_v2_blind] == ["math", "code"]
    assert sets.arena_hard_v2_authors_of_blind == ["math", "math"]


def test_public_prompts_labelled_for_the_project_are_trained_on(tmp_path: Path) -> None:
    labels, data = _corpus(tmp_path)
    for name, _ in PUBLIC_FILES:
        _write(labels / name, [{"id": name, "prompt": f"from {name}", "task": "knowledge"}])
    sources = [r.source for r in load_task_data(labels, data, TaskTrainConfig()).authored]
    assert sources.count("authored") == len(AUTHORED_FILES)
    assert sorted(s for s in sources if s != "authored") == sorted(s for _, s in PUBLIC_FILES)


def test_a_label_outside_the_taxonomy_is_refused(tmp_path: Path) -> None:
    labels, data = _corpus(tmp_path, authored_task="poetry")
    with pytest.raises(ValueError, match="poetry"):
        load_task_data(labels, data, TaskTrainConfig())


def test_a_held_out_label_outside_the_taxonomy_is_refused_too(tmp_path: Path) -> None:
    labels, data = _corpus(tmp_path)
    _write(labels / VICUNA_FILE, [{"question_id": 1, "category": "fermi",
                                   "prompt": "How many atoms in a grain of salt?",
                                   "task": "estimation"}])
    with pytest.raises(ValueError, match="estimation"):
        load_task_data(labels, data, TaskTrainConfig())


def _normalised(text: str) -> str:
    # Any script's letters and digits count (\w is Unicode-aware); a prompt of punctuation
    # only ("...") keeps its text, so it never collides with another one as "".
    return re.sub(r"\W+", " ", text.lower()).strip() or text


def _rows(name: str) -> list[dict[str, Any]]:
    folder = EVALUATION if name == MT_BENCH_FILE else LABELS
    return [json.loads(line) for line in (folder / name).read_text("utf-8").split("\n") if line]


def test_mt_bench_stays_out_of_the_training_folder() -> None:
    assert not (LABELS / MT_BENCH_FILE).exists()
    assert (EVALUATION / MT_BENCH_FILE).is_file()


def test_the_shipped_labels_are_in_the_taxonomy_and_the_test_sets_never_trained_on() -> None:
    training = [row for name in (*AUTHORED_FILES, *(n for n, _ in PUBLIC_FILES))
                for row in _rows(name)]
    assert training and all(row["task"] in TASK_TYPES for row in training)
    trained = {_normalised(row["prompt"]) for row in training}
    for name in HELD_OUT:
        held_out = _rows(name)
        assert held_out and all(row["task"] in TASK_TYPES for row in held_out)
        blind = [row[k] for row in held_out for k in ("blind_task", "blind_task_second")
                 if k in row]
        assert all(task in TASK_TYPES for task in blind)
        leaked = [row["prompt"] for row in held_out if _normalised(row["prompt"]) in trained]
        assert leaked == [], f"{name} prompts found in the training files: {leaked}"


@pytest.mark.skipif(not (SHARED_DATA / ARENA_FILE).is_file(), reason="needs ../shared/data")
def test_the_arena_hard_training_prompts_exclude_the_shared_arena_bench_set() -> None:
    # eval-tasks scores Arena-Bench with a model trained without it: the Arena-Hard prompts
    # it does train on must not repeat any of them.
    shared = [json.loads(line) for line in
              (SHARED_DATA / ARENA_FILE).read_text("utf-8").split("\n") if line]
    arena_bench = {_normalised(row["prompt"]) for row in shared}
    arena_hard = [n for n, source in PUBLIC_FILES if source == "arena_hard"]
    repeated = [row["id"] for name in arena_hard for row in _rows(name)
                if _normalised(row["prompt"]) in arena_bench]
    assert arena_hard and repeated == []


def test_eval_tasks_scores_the_authors_labels_against_the_blind_ones(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gateway.cli.main import cli

    labels, data = _corpus(tmp_path)
    _write(data / "routing" / "routellm_mmlu_gsm8k.jsonl", [
        *({"benchmark": "gsm8k", "prompt": f"{i} + {i}?"} for i in range(3)),
        *({"benchmark": "mmlu", "subject": "anatomy", "prompt": f"bone {i}?"} for i in range(8)),
    ])
    _write(labels / ARENA_HARD_V2_FILE, [
        _hard_v2("Prove that 7 is prime.", "math", "math", "math"),
        _hard_v2("Fix my Rust borrow error.", "math", "code", "code"),
        _hard_v2("Tell a joke", "writing", "chat", "writing"),
    ])
    result = CliRunner().invoke(cli, ["classifier", "eval-tasks", "--data", str(data),
                                      "--labels", str(labels)])
    assert result.exit_code == 0, result.output
    lines = {line[:30].strip(): line for line in result.output.splitlines()}
    assert "n=    3" in lines["arena-hard v2, authors' labels"]
    assert "n=    2" in lines["arena-hard v2, blind, agree"]
    assert "n=    1" in lines["arena-hard v2, all three agree"]
    # The authors call the Rust question maths: one of the two agreed rows matches.
    assert "n=    2  accuracy 0.500" in lines["arena-hard v2 authors vs blind"]
    assert "code→math 1" in result.output
