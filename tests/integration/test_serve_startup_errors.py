"""`gateway serve` that cannot start says why in one line and exits non-zero, before it
starts anything; `--debug` adds the traceback. Each cause a user meets: the port in use, a
policy that cannot be read, the database or Redis unreachable, an extra not installed."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def serve(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return subprocess.run([sys.executable, "-m", "gateway", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120, check=False,
                          env={**clean, "PYTHONPATH": str(REPO), "GATEWAY_HOME": str(cwd),
                               **env})


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_port_in_use_is_one_line_before_anything_starts(tmp_path: Path,
                                                           taken_port: int) -> None:
    done = serve("serve", "--port", str(taken_port), cwd=tmp_path)
    assert done.returncode == 2
    assert one_line(done) == (
        f"Error: port {taken_port} on 127.0.0.1 is in use (another gateway? `gateway status` "
        "names one started from this state home); pick another with --port")
    assert not (tmp_path / "gateway.db").exists()  # refused before the database was touched


def test_debug_adds_the_traceback(tmp_path: Path, taken_port: int) -> None:
    done = serve("--debug", "serve", "--port", str(taken_port), cwd=tmp_path)
    assert done.returncode == 2
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"Error: port {taken_port} on 127.0.0.1")
    by_setting = serve("serve", "--port", str(taken_port), cwd=tmp_path, GATEWAY_DEBUG="1")
    assert "Traceback (most recent call last)" in by_setting.stderr


def test_a_policy_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00not text")
    done = serve("serve", "--port", str(free_port()), "--policy", "binary.yaml", cwd=tmp_path)
    assert one_line(done).startswith(
        "Error: the policy does not validate: binary.yaml: <root>: cannot read: 'utf-8' codec")
    (tmp_path / "broken.yaml").write_text("version: 1\nbackends: [\n")
    done = serve("serve", "--port", str(free_port()), "--policy", "broken.yaml", cwd=tmp_path)
    assert one_line(done) == (
        "Error: the policy does not validate: broken.yaml:3: <root>: invalid YAML: while "
        "parsing a flow node, expected the node content, but found '<stream end>'")


def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    done = serve("serve", "--port", str(free_port()), "--no-sim", cwd=tmp_path,
                 GATEWAY_DATABASE_URL=f"postgresql+asyncpg://gw:s3cret@127.0.0.1:{port}/gw")
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith(f"Error: database postgresql+asyncpg://gw:***@127.0.0.1:{port}/gw "
                           "failed (GATEWAY_DATABASE_URL")
    assert line.endswith("; start it, or fix the setting") and "s3cret" not in line


def test_an_unreachable_redis_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    done = serve("serve", "--port", str(free_port()), "--no-sim", cwd=tmp_path,
                 GATEWAY_REDIS_URL=f"redis://:s3cret@127.0.0.1:{port}/0")
    assert done.returncode == 2
    line = one_line(done)
    assert line.startswith(f"Error: redis redis://:***@127.0.0.1:{port}/0 failed "
                           "(GATEWAY_REDIS_URL): ConnectionError")
    assert "s3cret" not in line


def test_a_missing_extra_is_one_line_naming_the_install(tmp_path: Path) -> None:
    done = serve("serve", "--port", str(free_port()), "--no-sim", cwd=tmp_path,
                 GATEWAY_PRESIDIO="true", GATEWAY_PRESIDIO_MODEL="en_core_web_nonexistent")
    assert "pip install" in one_line(done)


def test_a_database_down_with_keys_verified_before_starts_degraded(tmp_path: Path) -> None:
    """The one start-up the resilience design keeps: a replica restarted while Postgres is
    down serves the keys it verified before, and says so in one line."""
    from gateway.cli.preflight import check_services
    from gateway.errors import SetupError
    from gateway.settings import Settings

    url = f"postgresql+asyncpg://gw@127.0.0.1:{free_port()}/gw"
    settings = Settings(database_url=url, audit_spool_dir=tmp_path)
    with pytest.raises(SetupError, match="start it, or fix the setting"):
        check_services(settings)
    (tmp_path / "last-known.json").write_text('{"keys": {"h1": [["t", "acme"], 1.0]}}')
    [warning] = check_services(settings)
    assert warning.startswith("warning: database postgresql+asyncpg://gw@127.0.0.1:")
    assert warning.endswith("serving the 1 keys verified before (last-known.json) until it "
                            "answers")


def test_start_degraded_starts_anyway_with_a_warning_line(tmp_path: Path) -> None:
    """For orchestrators that restart replicas while a dependency is down: alive, not
    ready (the /readyz checks), instead of a restart loop."""
    from gateway.cli.preflight import check_services
    from gateway.settings import Settings

    settings = Settings(database_url=f"postgresql+asyncpg://gw@127.0.0.1:{free_port()}/gw",
                        redis_url=f"redis://127.0.0.1:{free_port()}/0",
                        audit_spool_dir=tmp_path, start_degraded=True)
    warnings = check_services(settings)
    assert [w.split(" ", 2)[1] for w in warnings] == ["redis", "database"]
    assert all(w.endswith("(GATEWAY_START_DEGRADED: starting, not ready)") for w in warnings)
