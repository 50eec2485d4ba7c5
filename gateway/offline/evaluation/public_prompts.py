"""The hard and everyday prompts the complexity model is checked on and never trained or
calibrated on: Arena-Hard v2.0's `hard_prompt` category (people's hard requests) and
Vicuna-bench's everyday categories (training/task_types/, sources in its README), and sets
written for the project with a `kind` per prompt (evaluation/, described in its README)."""

from __future__ import annotations

import json
from pathlib import Path

# Vicuna-bench's categories of ordinary requests (not its coding, math or Fermi questions).
EVERYDAY = ("generic", "knowledge", "roleplay", "common-sense", "writing")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def hard_and_everyday(tasks_dir: Path) -> tuple[list[str], list[str]]:
    """(hard, everyday) prompts, in file order."""
    hard = [r["prompt"] for r in _rows(tasks_dir / "arena_hard_v2_questions.jsonl")
            if r["category"] == "hard_prompt"]
    easy = [r["prompt"] for r in _rows(tasks_dir / "vicuna_bench_questions.jsonl")
            if r["category"] in EVERYDAY]
    return hard, easy


def written_hard_and_everyday(path: Path) -> tuple[list[str], list[str]]:
    """(hard, everyday) prompts of a file of `{"prompt", "kind"}` rows, in file order."""
    rows = _rows(path)
    unknown = {r["kind"] for r in rows} - {"hard", "everyday"}
    if unknown:
        raise ValueError(f"{path}: kind must be hard or everyday, not {sorted(unknown)}")
    return ([r["prompt"] for r in rows if r["kind"] == "hard"],
            [r["prompt"] for r in rows if r["kind"] == "everyday"])
