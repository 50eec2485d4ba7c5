"""`gateway keys create` refuses the tenant names the admin API refuses, before touching the
database, and takes the ones it takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.main import cli


@pytest.mark.parametrize("name", ["", "-starts-with-dash", "has space", "semi;colon",
                                  "../up", "x" * 129, "ünïcode"])
def test_a_name_the_admin_api_refuses_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path}/gw.db")
    result = CliRunner().invoke(cli, ["keys", "create", "--tenant", name])
    assert result.exit_code == 2, result.output
    assert "--tenant" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "gw.db").exists()  # refused before the database was opened


def test_a_name_the_admin_api_takes_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path}/gw.db")
    result = CliRunner().invoke(cli, ["keys", "create", "--tenant", "acme-eu.team_2"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1].startswith("sk-")
