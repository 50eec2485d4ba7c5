"""`gateway classify FILE.jsonl`, the interface evaluation tools use: one output line per
input line in a stable shape, a tenant's own detectors on request, clear errors."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from gateway.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "policies" / "examples" / "data-residency.yaml"
LINES = [
    {"prompt": "Status of PRJ-0042 for ada@corp.io"},
    {"messages": [{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "What is 2 + 2?"}]},
]


def run(tmp_path: Path, *args: str, lines: list[object] = LINES) -> tuple[int, str]:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines) + b"\n")
    result = CliRunner().invoke(cli, ["classify", str(source), *args])
    return result.exit_code, result.output


def test_one_stable_line_out_per_line_in(tmp_path: Path) -> None:
    code, output = run(tmp_path)
    assert code == 0, output
    first, second = (orjson.loads(line) for line in output.splitlines())
    for out in (first, second):
        assert set(out) == {"prompt_tokens", "complexity", "task", "sensitivity"}
        assert isinstance(out["prompt_tokens"], int) and out["prompt_tokens"] > 0
        assert set(out["complexity"]) == {"p_strong", "class"}
        assert out["complexity"]["class"] in {"low", "medium", "high"}
        assert set(out["sensitivity"]) == {"categories", "spans"}
        assert set(out["task"]) == {"type", "p"} and 0 < out["task"]["p"] <= 1
    assert second["task"]["type"] == "math"  # "What is 2 + 2?", the last user message
    assert first["sensitivity"]["categories"] == ["pii"]
    (span,) = first["sensitivity"]["spans"]
    assert set(span) == {"type", "start", "end", "confidence"}
    prompt = LINES[0]["prompt"]  # type: ignore[index]
    assert prompt[span["start"]:span["end"]] == "ada@corp.io"
    assert second["sensitivity"] == {"categories": [], "spans": []}


def test_a_tenants_own_detectors_are_applied_when_asked(tmp_path: Path) -> None:
    code, output = run(tmp_path, "--policy", str(POLICY), "--tenant", "research")
    assert code == 0, output
    first = orjson.loads(output.splitlines()[0])
    assert first["sensitivity"]["categories"] == ["confidential", "pii"]
    assert [s["type"] for s in first["sensitivity"]["spans"]] == ["custom.project_code",
                                                                  "email"]


def test_mistakes_are_named(tmp_path: Path) -> None:
    code, output = run(tmp_path, "--tenant", "research")
    assert code == 2 and "--policy and --tenant go together" in output
    code, output = run(tmp_path, "--policy", str(POLICY), "--tenant", "nobody")
    assert code == 1 and "no tenant 'nobody'" in output
    code, output = run(tmp_path, lines=[{"prompt": "fine"}, {"text": "no prompt"}])
    assert code == 1 and "line 2: expected" in output


def test_presidio_adds_its_findings_on_request(tmp_path: Path) -> None:
    pytest.importorskip("presidio_analyzer")
    lines: list[object] = [{"prompt": "Why is Zebulon so impulsive?"}]
    plain = orjson.loads(run(tmp_path, lines=lines)[1])
    code, output = run(tmp_path, "--presidio", lines=lines)
    assert code == 0, output
    assert plain["sensitivity"]["spans"] == []
    (span,) = orjson.loads(output)["sensitivity"]["spans"]
    assert (span["type"], span["start"], span["end"]) == ("person", 7, 14)


def test_an_input_id_comes_back_so_results_join_to_inputs(tmp_path: Path) -> None:
    lines: list[object] = [{"id": "q-1", "prompt": "hi"}, {"id": 42, **LINES[1]}, LINES[0]]
    code, output = run(tmp_path, "--progress", lines=lines)
    assert code == 0, output
    rows = [orjson.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert [row.get("id") for row in rows] == ["q-1", 42, None]
    assert "id" not in rows[2]  # no id in, none out: the shape stays stable
    assert "classified 3 prompts" in output  # the progress line (stderr)
