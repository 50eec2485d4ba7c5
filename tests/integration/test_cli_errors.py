"""Whatever path a user gets wrong, the command answers with one line naming it (and where
a setting pointed there, the setting), never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.main import cli


def gateway(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return subprocess.run([sys.executable, "-m", "gateway", *args], cwd=cwd, text=True,
                          capture_output=True, env={**clean, **env}, timeout=120,
                          check=False)


@pytest.mark.parametrize(("args", "env", "says"), [
    (("classify", "missing.jsonl"), {}, "'missing.jsonl' does not exist"),
    (("report", "html", "--out", "no/such/dir/page.html"), {}, "No such file or directory"),
    (("serve", "--policy", "missing.yaml"), {}, "(from --policy"),
    (("serve",), {"GATEWAY_POLICY_PATH": "missing.yaml"}, "(from GATEWAY_POLICY_PATH"),
    (("migrate",), {"GATEWAY_MIGRATIONS_DIR": "nowhere"}, "GATEWAY_MIGRATIONS_DIR"),
    (("keys", "list"), {"GATEWAY_DATABASE_URL": "postgresql+asyncpg://u:pw@127.0.0.1:9/x"},
     "GATEWAY_DATABASE_URL"),
    (("policy", "explain", "--request", "missing.json"), {}, "missing.json"),
])
def test_a_wrong_path_is_one_line(tmp_path: Path, args: tuple[str, ...], env: dict[str, str],
                                  says: str) -> None:
    done = gateway(*args, cwd=tmp_path, **env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "pw@" not in done.stderr  # a database password is never echoed


def test_migrate_cut_off_mid_run_says_so_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """What asyncpg raises when the server goes away during the upgrade (a connection closed
    in the middle of an operation, wrapped by SQLAlchemy as an InterfaceError), and a Ctrl-C:
    each one line, never the ~200-line traceback."""
    from sqlalchemy.exc import InterfaceError

    import gateway.db.migrate as migrate_module

    class ConnectionDoesNotExistError(Exception):
        pass

    async def cut_off(engine: object, revision: str = "head") -> None:
        raise InterfaceError("ALTER TABLE audit_log ...", None,
                             ConnectionDoesNotExistError(
                                 "connection was closed in the middle of operation"))

    async def interrupted(engine: object, revision: str = "head") -> None:
        raise KeyboardInterrupt

    from gateway.errors import SetupError

    url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    monkeypatch.setattr(migrate_module, "upgrade", cut_off)
    result = CliRunner().invoke(cli, ["migrate"], env={"GATEWAY_DATABASE_URL": url})
    # A SetupError: `gateway`'s entry point prints its one line and exits 1 (tests above).
    assert isinstance(result.exception, SetupError), result.exception
    message = str(result.exception)
    assert "\n" not in message and "closed in the middle of operation" in message
    assert "GATEWAY_DATABASE_URL" in message
    monkeypatch.setattr(migrate_module, "upgrade", interrupted)
    result = CliRunner().invoke(cli, ["migrate"], env={"GATEWAY_DATABASE_URL": url})
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1, result.output
    assert len(lines) == 1, result.output
    assert "migration interrupted; nothing of it was applied" in lines[0]
