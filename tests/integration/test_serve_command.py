"""`gateway serve` refuses to start, with an error that says what to do, when what it needs
is missing: the policy file, or Presidio when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.main import cli

REPO = Path(__file__).resolve().parents[2]


def test_no_policy_in_the_working_directory_names_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GATEWAY_POLICY_PATH", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "no policy file at policies/default.yaml" in result.output
    assert "--policy" in result.output


def test_presidio_asked_for_without_its_model_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_PRESIDIO", "true")
    monkeypatch.setenv("GATEWAY_PRESIDIO_MODEL", "en_core_web_nonexistent")
    # By environment, not --policy: serve writes --policy into os.environ, and monkeypatch
    # restores only what it set.
    monkeypatch.setenv("GATEWAY_POLICY_PATH", str(REPO / "policies" / "default.yaml"))
    result = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert result.exit_code == 1
    assert "pip install" in result.output
