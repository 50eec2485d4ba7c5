"""A redis-server of a test's own, on a free port, without persistence: the outage tests
freeze it (SIGSTOP), kill it and start it again; the shared test Redis is never touched."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REQUIRE
from tests.support.servers import free_port


class RedisServer:
    """A redis-server of this test's own, on a free port, without persistence."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True,
                             check=False).stdout.strip() != b"PONG":
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)
        self.proc.kill()
        self.proc.wait(timeout=10)
        self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        if REQUIRE:
            pytest.fail("redis-server not installed")
        pytest.skip("redis-server not installed")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None:
            server.kill()
