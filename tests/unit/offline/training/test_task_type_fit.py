"""fit-tasks: the shipped task model adapted to an organisation's own labels; the labelled
file's mistakes named by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.classify.task_type import DEFAULT_TASK_MODEL_PATH, TaskModel
from gateway.cli.main import cli
from gateway.offline.training.task_type_fit import (
    LabelledFileError,
    fit_to_labels,
    read_labelled,
)
from gateway.offline.training.task_type_train import Labelled

NOUNS = ("ledger", "invoice", "shipment", "forecast", "warehouse", "payroll", "quota",
         "pallet", "tariff", "rebate", "voucher", "manifest")
# An in-house verb the shipped model never saw: this organisation's word for reconciling
# figures, which it counts as maths.
OWN = [Labelled("own", f"Please zorblat the {noun} for {team}.", "math")
       for noun in NOUNS for team in ("finance", "ops")]
POEM = "Write a short poem about the sea at night."


def base_document() -> dict:
    return json.loads(DEFAULT_TASK_MODEL_PATH.read_text(encoding="utf-8"))


def test_the_fitted_model_learns_the_organisations_own_word_and_keeps_the_rest() -> None:
    shipped = TaskModel.load()
    probe = "Please zorblat the receipts for legal."  # a noun and team it was not fitted on
    assert shipped.assess(probe).type != "math"
    document = fit_to_labels(base_document(), OWN)
    fitted = TaskModel.from_document(document)
    assert fitted.assess(probe).type == "math"
    # What the new labels never touch types as before.
    assert fitted.assess(POEM).type == shipped.assess(POEM).type == "writing"
    base = base_document()
    untouched = [g for g in base["ngrams"] if "sea" in g.split()]
    assert untouched and all(document["ngrams"][g] == base["ngrams"][g] for g in untouched)
    assert document["adapted"]["examples"] == {"math": len(OWN)}
    assert document["format"] == base["format"] and document["featurizer"] == base["featurizer"]


def test_the_labelled_file_is_checked_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "own.jsonl"
    cases = {
        '{"prompt": "hi", "task": "poetry"}\n': "1: 'task' must be one of",
        '\n{"prompt": "", "task": "chat"}\n': "2: needs a non-empty string 'prompt'",
        'not json\n': "1: not JSON",
        '["a list"]\n': "1: needs a non-empty string 'prompt'",
        '\n\n': "no labelled prompts",
    }
    for text, message in cases.items():
        path.write_text(text, encoding="utf-8")
        with pytest.raises(LabelledFileError, match=message):
            read_labelled(path)
    path.write_bytes(b'{"prompt": "caf\xe9", "task": "chat"}\n')  # Latin-1, not UTF-8
    with pytest.raises(LabelledFileError, match="not UTF-8 text"):
        read_labelled(path)
    path.write_text('{"prompt": "hi there", "task": "chat", "id": 7}\n', encoding="utf-8")
    assert read_labelled(path) == [Labelled("own", "hi there", "chat")]


def test_fit_tasks_writes_a_model_classify_and_the_gateway_can_load(tmp_path: Path) -> None:
    labelled, held_out = tmp_path / "own.jsonl", tmp_path / "test.jsonl"
    labelled.write_text("".join(json.dumps({"prompt": r.prompt, "task": r.task}) + "\n"
                                for r in OWN), encoding="utf-8")
    held_out.write_text(json.dumps({"prompt": "Please zorblat the receipts for legal.",
                                    "task": "math"}) + "\n", encoding="utf-8")
    out = tmp_path / "task_model.json"
    runner = CliRunner()
    fitted = runner.invoke(cli, ["classifier", "fit-tasks", "--labelled", str(labelled),
                                 "--out", str(out), "--test", str(held_out)])
    assert fitted.exit_code == 0, fitted.output
    assert f"fitted on {len(OWN)} prompts (math {len(OWN)})" in fitted.output
    lines = {line[:30].strip(): line for line in fitted.output.splitlines()}
    assert "accuracy 0.000" in lines["before (base model)"]
    assert "accuracy 1.000" in lines["after (fitted)"]
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps({"prompt": "Please zorblat the receipts for legal."}) + "\n",
                       encoding="utf-8")
    typed = runner.invoke(cli, ["classify", str(prompts), "--task-model", str(out)])
    assert typed.exit_code == 0, typed.output
    assert json.loads(typed.output)["task"]["type"] == "math"


def test_fit_tasks_names_a_bad_label_and_a_bad_base(tmp_path: Path) -> None:
    labelled = tmp_path / "own.jsonl"
    labelled.write_text('{"prompt": "hi", "task": "smalltalk"}\n', encoding="utf-8")
    runner = CliRunner()
    bad_label = runner.invoke(cli, ["classifier", "fit-tasks", "--labelled", str(labelled),
                                    "--out", str(tmp_path / "m.json")])
    assert bad_label.exit_code != 0 and "own.jsonl:1: 'task' must be one of" in bad_label.output
    not_a_model = tmp_path / "model.json"
    not_a_model.write_text("{}", encoding="utf-8")
    bad_base = runner.invoke(cli, ["classifier", "fit-tasks", "--labelled", str(labelled),
                                   "--out", str(tmp_path / "m.json"), "--base",
                                   str(not_a_model)])
    assert bad_base.exit_code != 0 and "unknown task model format" in bad_base.output
    assert not (tmp_path / "m.json").exists()
