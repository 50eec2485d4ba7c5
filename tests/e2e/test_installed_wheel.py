"""The package as a user installs it: a wheel built from this checkout, installed into a fresh
virtualenv, every command run from an empty directory far from the repository. The demo
policy, the migrations and the schema must come from the installed package, and a wrong
path must be one line naming the setting, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import Process
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ("gateway", "migrations", "policies", "pyproject.toml", "README.md")
DEMO_PORTS = (8101, 8102, 8201, 8202)  # the demo policy's simulated backends


@dataclass
class Installed:
    venv: Path
    home: Path  # an empty working directory outside the repository
    data: Path  # XDG_DATA_HOME: the gateway's state goes to <data>/gateway

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GATEWAY_", "PYTHON", "VIRTUAL_ENV"))}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["XDG_DATA_HOME"] = str(self.data)  # the per-user state home, kept to this test
        return {**env, **extra}

    def run(self, *args: str, stdin: str | None = None, timeout: float = 120,
            cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "gateway"), *args],
                              cwd=cwd or self.home,
                              env=self.env(**env), input=stdin, capture_output=True,
                              text=True, timeout=timeout, check=False)


def _run(*args: str | Path) -> None:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in SHIPPED:  # a copy, so the build writes nothing into the checkout
        path = REPO / name
        if path.is_dir():
            shutil.copytree(path, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", work / "dist", source)
    wheel = next((work / "dist").glob("*.whl"))
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q",
         "--no-deps", wheel)
    # The dependencies come from the test environment (installing them again from the index
    # would test pip, not the package); the gateway itself only from the wheel.
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    home = work / "empty"
    home.mkdir()
    return Installed(venv, home, work / "data")


def test_the_package_is_imported_from_the_wheel_with_its_data(installed: Installed) -> None:
    code = ("import gateway, gateway.package_data as d; print(gateway.__file__); "
            "print(d.demo_policy_path().is_file(), d.policy_schema_path().is_file(), "
            "(d.migrations_path() / 'env.py').is_file(), len(d.example_policies()))")
    done = subprocess.run([str(installed.venv / "bin" / "python"), "-c", code],
                          cwd=installed.home, env=installed.env(), capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    where, files = done.stdout.splitlines()
    assert where.startswith(str(installed.venv)) and not where.startswith(str(REPO))
    assert files.split()[:3] == ["True", "True", "True"] and int(files.split()[3]) >= 5


def test_help_and_policy_commands_work_anywhere(installed: Installed) -> None:
    assert installed.run("--help").returncode == 0
    explained = installed.run(
        "policy", "explain", "--request", "-",
        stdin='{"model": "auto", "messages": [{"role": "user", "content": "hi"}]}')
    assert explained.returncode == 0, explained.stderr
    assert "cheapest-good-enough" in explained.stdout
    schema = installed.run("policy", "schema")
    assert schema.returncode == 0 and '"backends"' in schema.stdout


def test_wrong_paths_are_one_line_naming_the_setting(installed: Installed) -> None:
    missing = installed.run("serve", "--policy", "nowhere.yaml")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "no policy file at nowhere.yaml (from --policy" in missing.stderr
    no_migrations = installed.run("migrate", GATEWAY_MIGRATIONS_DIR="/nonexistent")
    assert no_migrations.returncode == 2 and "Traceback" not in no_migrations.stderr
    assert "GATEWAY_MIGRATIONS_DIR" in no_migrations.stderr
    assert len(no_migrations.stderr.strip().splitlines()) == 1


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def demo(installed: Installed) -> Iterator[str]:
    taken = [p for p in DEMO_PORTS if not _port_free(p)]
    assert not taken, f"the demo's simulated backends need 127.0.0.1 ports {taken}"
    port = free_port()
    serve = Process("serve", [str(installed.venv / "bin" / "gateway"), "serve", "--port",
                              str(port)], installed.home, installed.env(), port)
    try:
        yield serve.wait_healthy(timeout_s=60).url
    finally:
        returncode = serve.stop()
    assert returncode == 0, serve.output()
    assert all(_port_free(p) for p in DEMO_PORTS)  # the simulators stopped with it


def test_the_demo_runs_and_every_command_reads_it(
    installed: Installed, demo: str, postgres_url: str
) -> None:
    log = (installed.home / "serve.log").read_text()
    assert "the demo policy" in log and "API key of tenant 'demo'" in log
    assert (installed.data / "gateway" / "admin-key").stat().st_mode & 0o777 == 0o600
    assert not (installed.home / ".gateway").exists()  # state lives in the per-user home
    created = installed.run("keys", "create", "--tenant", "demo", "--name", "wheel-test")
    assert created.returncode == 0 and created.stdout.strip().startswith("sk-gw-")
    sent = installed.run("demo", "traffic", "--url", demo, "--requests", "16", "--burst", "8")
    assert sent.returncode == 0, sent.stderr
    assert "24 of 24 answered" in sent.stdout
    deadline = time.monotonic() + 10  # audit rows reach the database in batches
    while True:
        cost = installed.run("report", "cost", "--since", "1h", "--format", "json")
        assert cost.returncode == 0, cost.stderr
        totals = json.loads(cost.stdout)["totals"]
        if totals["requests"] >= 24 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert totals["requests"] == 24 and float(totals["cost_usd"]) > 0
    # Another directory finds the same state; pointed at nothing, a one-line refusal.
    elsewhere = installed.home.parent / "elsewhere"
    elsewhere.mkdir()
    there = installed.run("report", "cost", "--since", "1h", "--format", "json", cwd=elsewhere)
    assert there.returncode == 0, there.stderr
    # The same requests and tokens (idle GPU-hours grow between the two reads).
    def served(out: str) -> list[tuple[str, int, int]]:
        return [(r["tenant"], r["requests"], r["tokens"]) for r in json.loads(out)["rows"]]

    assert served(there.stdout) == served(cost.stdout)
    status = installed.run("status", cwd=elsewhere)
    assert status.returncode == 0 and f"{demo}/v1" in status.stdout, status.stdout
    nowhere = installed.run("report", "cost", cwd=elsewhere, GATEWAY_HOME=str(elsewhere / "x"))
    assert nowhere.returncode == 2 and len(nowhere.stderr.strip().splitlines()) == 1
    assert f"no gateway database at {elsewhere / 'x' / 'gateway.db'}" in nowhere.stderr
    assert not (elsewhere / "x").exists()  # looked, never created
    page = installed.run("report", "html", "--out", "page.html", "--since", "7d")
    assert page.returncode == 0, page.stderr
    assert "<svg" in (installed.home / "page.html").read_text()
    verified = installed.run("audit", "verify", "--since", "1h")
    assert verified.returncode == 0 and verified.stdout.startswith("ok:")
    listed = installed.run("keys", "list")
    assert listed.stdout.splitlines()[0].split() == ["ID", "TENANT", "PREFIX", "NAME", "STATE"]
    migrated = installed.run("migrate", GATEWAY_DATABASE_URL=postgres_url)
    assert migrated.returncode == 0, migrated.stderr
    from alembic.script import ScriptDirectory

    from gateway.package_data import migrations_path

    head = ScriptDirectory(str(migrations_path())).get_current_head()
    assert migrated.stdout.strip() == f"database at revision {head}"
