"""Commands find the state `serve` keeps from any directory: read-only commands refuse in
one line where there is no database (and create none), `--home` points them elsewhere, and
`gateway status` says where everything is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def gateway(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return subprocess.run([sys.executable, "-m", "gateway", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**clean, "PYTHONPATH": str(REPO), **env})


@pytest.mark.parametrize("args", [
    ("report", "cost"),
    ("report", "html", "--out", "page.html"),
    ("audit", "verify", "--since", "1d"),
    ("policy", "replay", "--policy", str(REPO / "policies" / "default.yaml")),
    ("plan", "--from-audit"),
])
def test_a_read_command_with_no_database_refuses_in_one_line_and_creates_none(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = gateway(*args, cwd=tmp_path)
    home = Path(os.environ["XDG_DATA_HOME"]) / "gateway"
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"Error: no gateway database at {home / 'gateway.db'} (the state home, from per-user "
        "default); point at the one `gateway serve` uses with --home DIR, GATEWAY_HOME or "
        "GATEWAY_DATABASE_URL (`gateway status` in its shell shows them)"]
    assert not home.exists() and not (tmp_path / ".gateway").exists()


def test_an_embedded_url_that_names_no_file_names_the_setting(tmp_path: Path) -> None:
    done = gateway("report", "savings", cwd=tmp_path,
                   GATEWAY_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/gone.db")
    assert done.returncode == 2
    assert f"no gateway database at {tmp_path}/gone.db (GATEWAY_DATABASE_URL)" in done.stderr
    flag = gateway("report", "savings", "--database-url", "sqlite+aiosqlite:///gone.db",
                   cwd=tmp_path)
    assert f"no gateway database at {tmp_path}/gone.db (--database-url)" in flag.stderr


def test_home_flag_and_variable_reach_the_same_database_from_anywhere(tmp_path: Path) -> None:
    state, elsewhere = tmp_path / "state", tmp_path / "elsewhere"
    elsewhere.mkdir()
    made = gateway("--home", str(state), "keys", "create", "--tenant", "acme", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (state / "gateway.db").is_file()
    listed = gateway("keys", "list", cwd=elsewhere, GATEWAY_HOME=str(state))
    assert "acme" in listed.stdout
    report = gateway("--home", str(state), "report", "cost", "--format", "json", cwd=elsewhere)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["rows"] == []


def test_an_old_dot_gateway_keeps_working_with_a_one_line_notice(tmp_path: Path) -> None:
    made = gateway("keys", "create", "--tenant", "old", cwd=tmp_path,
                   GATEWAY_HOME=str(tmp_path / ".gateway"))
    assert made.returncode == 0, made.stderr
    listed = gateway("keys", "list", cwd=tmp_path)
    assert "old" in listed.stdout
    notice = listed.stderr.splitlines()
    assert len(notice) == 1 and notice[0].startswith("note: using the state in "), notice


def test_status_says_where_state_policy_database_and_redis_are(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = gateway("status", cwd=tmp_path, GATEWAY_HOME=str(state),
                   GATEWAY_REDIS_URL="redis://:hunter2@127.0.0.1:1/0")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(None, 1) for line in done.stdout.splitlines())
    assert lines["state"] == f"{state}  (from GATEWAY_HOME)"
    assert lines["policy"] == "the demo policy shipped in the package"
    assert lines["database"] == (f"{state / 'gateway.db'}  (SQLite, not created yet)  "
                                 "(from state home)")
    assert lines["redis"] == "redis://:***@127.0.0.1:1/0"
    assert lines["gateway"] == "not running from this state home"
    assert not state.exists()  # status reads, never creates


def test_status_names_the_running_gateway_while_it_runs(tmp_path: Path) -> None:
    from gateway.cli import running

    loaded = tmp_path / "prod.yaml"
    # This process: alive, but nothing on port 1; it loaded another policy than the shell's.
    running.record(tmp_path, "127.0.0.1", 1, str(loaded))
    done = gateway("status", cwd=tmp_path, GATEWAY_HOME=str(tmp_path))
    assert (f"gateway   http://127.0.0.1:1/v1  (pid {os.getpid()}, not answering /healthz)"
            in done.stdout), done.stdout
    assert f"          the running gateway loaded {loaded}" in done.stdout
    (tmp_path / running.RECORD_NAME).unlink()


def test_a_home_that_cannot_be_written_never_stops_serve(tmp_path: Path) -> None:
    from gateway.cli import running

    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # as a read-only root filesystem refuses the write
    assert running.record(blocked / "home", "127.0.0.1", 8080) is False
    assert running.read(blocked / "home") is None
