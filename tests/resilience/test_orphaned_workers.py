"""`gateway serve --workers 2` SIGKILLed: its workers go too (they would otherwise serve on,
unsupervised, holding memory and the port)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import create_key
from tests.resilience.processes import gateway_process, sims_policy
from tests.support.servers import free_port

pytestmark = pytest.mark.resilience


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def descendants(pid: int) -> set[int]:
    found = children(pid)
    for child in list(found):
        found |= descendants(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is missing


def test_workers_die_with_a_killed_serve(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    create_key(db_url, "acme")  # the embedded database migrated before the workers start
    policy = tmp_path / "policy.yaml"
    policy.write_text(sims_policy({"sim": free_port()}))
    port = free_port()
    gw = gateway_process("gateway", ["serve", "--port", str(port), "--policy", str(policy),
                                     "--no-sim", "--workers", "2"], tmp_path,
                         {"GATEWAY_DATABASE_URL": db_url, "OTEL_SDK_DISABLED": "true"}, port)
    workers: set[int] = set()
    try:
        gw.wait_healthy(timeout_s=90)
        workers = children(gw.pid)
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = children(gw.pid)
        assert workers, gw.output()
        workers = descendants(gw.pid)  # their token-counting pools, too
        gw.signal(signal.SIGKILL)
        gw.proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [w for w in workers if alive(w)]
        assert not left, [Path(f"/proc/{w}/cmdline").read_bytes()[:200] for w in left]
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{gw.url}/healthz", timeout=2)
    finally:
        for pid in workers:  # never left behind by a failing run
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        gw.stop()
