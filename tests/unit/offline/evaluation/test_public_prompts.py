"""The evaluation prompt sets read as (hard, everyday), and a mislabelled row is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.offline.evaluation.public_prompts import written_hard_and_everyday

EVALUATION = Path(__file__).resolve().parents[4] / "evaluation"


def test_a_written_set_splits_by_kind_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    rows = [{"prompt": "Prove it.", "kind": "hard"}, {"prompt": "Hi?", "kind": "everyday"},
            {"prompt": "Derive it.", "kind": "hard"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    assert written_hard_and_everyday(path) == (["Prove it.", "Derive it."], ["Hi?"])


def test_a_row_of_another_kind_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"prompt": "x", "kind": "medium"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"set\.jsonl: kind must be hard or everyday"):
        written_hard_and_everyday(path)


@pytest.mark.parametrize(("name", "hard", "everyday"),
                         [("short_hard_everyday.jsonl", 40, 40),
                          ("short_hard_everyday_blind.jsonl", 147, 130),
                          ("short_hard_everyday_blind_2.jsonl", 74, 73),
                          ("math_hard_everyday_blind.jsonl", 60, 60)])
def test_the_shipped_sets_hold_what_their_readme_says(name: str, hard: int,
                                                           everyday: int) -> None:
    found = written_hard_and_everyday(EVALUATION / name)
    assert (len(found[0]), len(found[1])) == (hard, everyday)
    assert len(set(found[0] + found[1])) == hard + everyday  # no prompt twice
