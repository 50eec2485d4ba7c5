"""Whatever path a user gets wrong, the command answers with one line naming it (and where
a setting pointed there, the setting), never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


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
