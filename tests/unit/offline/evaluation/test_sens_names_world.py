"""Person-name recall in other languages' text: loading the sentence file, scoring it per
language, refusing a name its sentence does not hold, and the table `eval-sensitivity` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gateway.cli.sensitivity_commands  # noqa: F401  (registers eval-sensitivity)
from gateway.classify.sensitivity import SensitivityScanner
from gateway.cli.classifier_commands import classifier
from gateway.offline.evaluation.sensitivity_names_world import load_name_examples, name_recall

ROWS = [
    {"text": "Gestern hat Frau Albrecht angerufen.", "lang": "de", "names": ["Albrecht"]},
    {"text": "La reunión con Marisol Cuadrado es el lunes.", "lang": "es",
     "names": ["Marisol Cuadrado"]},
    # A lone surname with no cue at all: not found, and counted as missed.
    {"text": "Vraag het aan Blokzijl.", "lang": "nl", "names": ["Blokzijl"]},
]


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def test_recall_overall_and_per_language(tmp_path: Path) -> None:
    examples = load_name_examples(write(tmp_path / "names.jsonl", ROWS))
    rows = {r.language: r for r in name_recall(SensitivityScanner(), examples, rounds=200)}
    assert (rows["all"].names, rows["all"].found) == (3, 2)
    assert rows["all"].interval is not None and rows["all"].interval.low <= 2 / 3
    assert (rows["de"].recall, rows["es"].recall, rows["nl"].recall) == (1.0, 1.0, 0.0)
    assert rows["de"].interval is None


def test_a_name_missing_from_its_sentence_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "names.jsonl", [{"text": "Hallo Welt", "lang": "de",
                                             "names": ["Albrecht"]}])
    with pytest.raises(ValueError, match=r"names\.jsonl:1: 'Albrecht' is not in its text"):
        load_name_examples(path)


def test_eval_sensitivity_prints_the_table_when_the_file_exists(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    names = write(tmp_path / "names.jsonl", ROWS)
    args = ["eval-sensitivity", "--data", str(tmp_path / "data"), "--no-latency",
            "--bootstrap", "100"]
    shown = CliRunner().invoke(classifier, [*args, "--names", str(names)])
    assert shown.exit_code == 0, shown.output
    assert "Person names in other languages' text" in shown.output
    assert "  all             3    0.667" in shown.output
    absent = CliRunner().invoke(classifier, [*args, "--names", str(tmp_path / "none.jsonl")])
    assert absent.exit_code == 0 and "other languages" not in absent.output
