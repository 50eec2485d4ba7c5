"""A dedicated PostgreSQL cluster per test, which the test may stop and start at will (the
shared test server is never touched)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob
from pathlib import Path

import pytest

from tests.conftest import REQUIRE
from tests.resilience.redis_server import redis_server

# Closes what a test opened and collects after it, so a socket a test left unclosed fails that
# test (warnings are errors), not whichever later one happens to trigger a collection.
from tests.support.sdk_clients import close_opened_clients
from tests.support.servers import free_port

__all__ = ["close_opened_clients", "redis_server"]


@dataclass
class PostgresCluster:
    bin_dir: Path
    root: Path  # data directory, log and socket live here
    port: int

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def initdb(self) -> None:
        self._run("initdb", "-D", str(self.root / "data"), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8")

    def start(self) -> None:
        options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} "
                   "-c fsync=off")
        self._run("pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "pg.log"),
                  "-w", "-t", "60", "-o", options, "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        status = self._run("pg_ctl", "-D", str(self.root / "data"), "status", check=False)
        return status.returncode == 0

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / tool), *args]
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root (as in scripts/test.sh)
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=90)


def postgres_bin_dir() -> Path | None:
    found = glob("/usr/lib/postgresql/*/bin/initdb")
    if not found:
        return None
    newest = max(found, key=lambda p: int(Path(p).parts[4]) if Path(p).parts[4].isdigit() else 0)
    return Path(newest).parent


@pytest.fixture
def dedicated_postgres() -> Iterator[PostgresCluster]:
    bin_dir = postgres_bin_dir()
    if bin_dir is None:
        if REQUIRE:
            pytest.fail("PostgreSQL server binaries (/usr/lib/postgresql/*/bin) not found")
        pytest.skip("PostgreSQL server binaries not installed")
    # Not under pytest's tmp_path: its parents are private to root, and the cluster belongs
    # to the postgres user when the tests run as root.
    root = Path(tempfile.mkdtemp(prefix="gateway-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    cluster = PostgresCluster(bin_dir, root, free_port())
    try:
        cluster.initdb()
        cluster.start()
        yield cluster
    finally:
        if cluster.running():
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)

