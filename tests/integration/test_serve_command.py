"""`gateway serve` refuses to start, with an error that says what to do, when what it needs
is missing: the policy file, or Presidio when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.main import cli

REPO = Path(__file__).resolve().parents[2]


def test_a_missing_policy_file_names_the_setting_that_pointed_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GATEWAY_POLICY_PATH", "nowhere/policy.yaml")
    result = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "no policy file at nowhere/policy.yaml (from GATEWAY_POLICY_PATH" in result.output
    assert "unset it to run the demo policy" in result.output
    assert "Traceback" not in result.output


def test_a_missing_policy_flag_names_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # serve hands --policy to its workers through os.environ: set it here first, so that
    # monkeypatch puts the variable back as it was (unset) when the test ends.
    monkeypatch.setenv("GATEWAY_POLICY_PATH", "set-by-the-test.yaml")
    result = CliRunner().invoke(cli, ["serve", "--port", "1", "--policy", "gone.yaml"])
    assert result.exit_code == 1
    assert "no policy file at gone.yaml (from --policy" in result.output


def test_without_configuration_the_demo_policy_shipped_in_the_package_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.package_data import demo_policy_path
    from gateway.settings import Settings

    monkeypatch.chdir(tmp_path)  # an empty directory: nothing to find beside it
    monkeypatch.delenv("GATEWAY_POLICY_PATH", raising=False)
    settings = Settings()
    assert settings.uses_demo_policy
    assert settings.policy_path == demo_policy_path() and settings.policy_path.is_file()


def test_presidio_asked_for_without_its_model_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_PRESIDIO", "true")
    monkeypatch.setenv("GATEWAY_PRESIDIO_MODEL", "en_core_web_nonexistent")
    # By environment, not --policy: serve writes --policy into os.environ, and monkeypatch
    # restores only what it set.
    monkeypatch.setenv("GATEWAY_POLICY_PATH", str(REPO / "policies" / "default.yaml"))
    result = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "pip install" in result.output


def test_a_task_model_that_cannot_be_used_is_refused_before_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_model = tmp_path / "task.json"
    not_a_model.write_text('{"format": "something-else/1"}', encoding="utf-8")
    monkeypatch.setenv("GATEWAY_POLICY_PATH", str(REPO / "policies" / "default.yaml"))
    for path, reason in ((not_a_model, "unknown task model format 'something-else/1'"),
                         (tmp_path / "gone.json", "task model not found")):
        monkeypatch.setenv("GATEWAY_TASK_MODEL", str(path))
        result = CliRunner().invoke(cli, ["serve", "--port", "1"])
        assert result.exit_code == 1, result.output
        assert f"GATEWAY_TASK_MODEL: {reason}" in result.output
        assert "Traceback" not in result.output


def test_a_missing_or_corrupt_encoder_table_stops_start_up_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.classify.encoder_paths import DEFAULT_TABLE_PATH

    corrupt = tmp_path / "table.npz"
    corrupt.write_bytes(DEFAULT_TABLE_PATH.read_bytes()[:4096])
    monkeypatch.setenv("GATEWAY_POLICY_PATH", str(REPO / "policies" / "default.yaml"))
    for path, reason in ((tmp_path / "gone.npz", "encoder table not found"),
                         (corrupt, "unreadable or corrupt")):
        monkeypatch.setenv("GATEWAY_ENCODER_TABLE", str(path))
        result = CliRunner().invoke(cli, ["serve", "--port", "1"])
        assert result.exit_code == 1, result.output
        (line,) = [line for line in result.output.splitlines() if line.strip()]
        assert reason in line and str(path) in line and "GATEWAY_ENCODER_TABLE" in line
        assert "Traceback" not in result.output


def test_the_accurate_mode_without_its_extra_stops_start_up_in_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    # onnxruntime made unimportable in that process, as in an install without the extra.
    code = ("import sys; sys.modules['onnxruntime'] = None; sys.argv = ['gateway', 'serve',"
            " '--port', '1']; from gateway.cli.main import main; main()")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env.update(GATEWAY_COMPLEXITY_ENCODER="minilm",
               GATEWAY_POLICY_PATH=str(REPO / "policies" / "default.yaml"))
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, timeout=120,
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "onnxruntime" in lines[0] and "llm-routing-gateway[encoder]" in lines[0]
    assert "GATEWAY_COMPLEXITY_ENCODER" in lines[0]
