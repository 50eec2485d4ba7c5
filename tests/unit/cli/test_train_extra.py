"""scikit-learn and scipy are the `train` extra: without them each training command ends in
one line naming the extra to install, never a traceback. Checked in a fresh interpreter
where importing either fails, as it does in a serving install."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gateway.cli.extras import DISTRIBUTION, TRAIN_MODULES

REPO = Path(__file__).resolve().parents[3]
TRAINING_COMMANDS = ("classifier train", "classifier eval", "classifier crossval",
                     "classifier train-complexity", "classifier train-tasks",
                     "classifier eval-tasks", "classifier fit-tasks", "router fit", "router eval")
BLOCKED = "; ".join(f"sys.modules[{m!r}] = None" for m in sorted(TRAIN_MODULES))


def run_without_train(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = (f"import sys; {BLOCKED}; sys.argv = ['gateway', *{args!r}]; "
            "from gateway.cli.main import main; main()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=cwd, check=False, timeout=120)


def commands(tmp: Path) -> dict[str, list[str]]:
    data = tmp / "data"
    data.mkdir()
    outcomes = tmp / "outcomes.jsonl"
    outcomes.write_text('{"prompt": "hi", "weak_score": 0, "strong_score": 1}\n')
    router = tmp / "router"
    router.mkdir()
    out = str(tmp / "out.json")  # never the shipped model, whatever happens
    return {
        "classifier train": ["--data", str(data), "--out", out],
        "classifier eval": ["--data", str(data)],
        "classifier crossval": ["--data", str(data)],
        "classifier train-complexity": ["--data", str(data), "--prompts", str(data),
                                        "--out", out],
        "classifier train-tasks": ["--data", str(data), "--labels", str(data), "--out", out],
        "classifier eval-tasks": ["--data", str(data), "--labels", str(data)],
        "classifier fit-tasks": ["--labelled", str(outcomes), "--out", out],
        "router fit": ["--outcomes", str(outcomes), "--out", str(tmp / "fitted")],
        "router eval": ["--outcomes", str(outcomes), "--router", str(router)],
    }


@pytest.mark.parametrize("command", TRAINING_COMMANDS)
def test_a_training_command_without_the_extra_says_which_to_install(
    command: str, tmp_path: Path,
) -> None:
    args = commands(tmp_path)[command]
    done = run_without_train([*command.split(), *args], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        f"Error: `gateway {command}` needs the train extra: "
        f"pip install '{DISTRIBUTION}[train]'"]
    assert list(tmp_path.glob("out.json")) == []


def test_the_extra_named_is_the_projects_own() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    train = project["optional-dependencies"]["train"]
    assert {r.split(">")[0].split("=")[0] for r in train} == {"scikit-learn", "scipy"}
    # The serving install leaves them out.
    assert not [r for r in project["dependencies"] if r.startswith(("scikit-learn", "scipy"))]
