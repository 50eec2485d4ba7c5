"""A child process for tests that run the gateway or a simulator as a real command: its output
goes to a log file shown when a test fails, and it can be waited on, signalled and measured
(a thread cannot be SIGKILLed, nor its memory told apart from the test's)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx


class Process:
    """One child process whose output goes to a log file (shown when a test fails)."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, env: dict[str, str],
                 port: int) -> None:
        """Runs `argv` in `log_dir` with exactly `env`; `port` is where it will listen."""
        self.name, self.port = name, port
        self.log_path = log_dir / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(argv, cwd=log_dir, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_healthy(self, path: str = "/health", timeout_s: float = 30) -> Process:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.proc.poll() is None, f"{self.name} exited:\n{self.output()}"
            try:
                if httpx.get(self.url + path, timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"{self.name} did not start:\n{self.output()}"
            time.sleep(0.1)

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> int:
        """Terminate (then kill) if still running; idempotent. Returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a stopped process cannot handle SIGTERM
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._log.close()
        return self.proc.returncode
