"""The policy file broken in every way an operator (or a half-finished deploy) can break it,
while several clients keep sending: not one request fails, the last good policy keeps
serving, each rejected reload is counted, readiness stays green, and a valid edit afterwards
is picked up.

Invalid YAML alone, under one client, is in tests/e2e/test_policy_reload.py; this covers the
schema-invalid, empty, truncated, binary, deleted and dangling-reference cases, under load."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.resilience.processes import sims_policy
from tests.support.servers import ServerThread, serve

pytestmark = pytest.mark.resilience

CLIENTS = 4


def broken_edits(good: str) -> dict[str, Callable[[Path], None]]:
    def write(text: str | bytes) -> Callable[[Path], None]:
        def edit(path: Path) -> None:
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text)
        return edit

    return {
        "invalid YAML": write("version: 1\nbackends: [oops\n"),
        "unknown key": write(good.replace("version: 1\n", "version: 1\nbackendz: []\n")),
        "wrong type": write(good.replace("context_window: 1024", "context_window: lots")),
        "unknown version": write(good.replace("version: 1", "version: 99")),
        "dangling reference": write(good.replace("auto: [sim-a, sim-b]", "auto: [sim-x]")),
        "empty": write(""),
        "truncated": write(good[: len(good) // 2]),
        "binary": write(b"\x00\xff\xfe" * 100),
        # A missing file is not a reload at all (the watcher waits for it to reappear, as
        # during an atomic rename): nothing to count, and serving goes on.
        "deleted": lambda path: path.unlink(),
    }


@pytest.fixture
def sims() -> Iterator[dict[str, ServerThread]]:
    started = {n: ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=i, **FAST)))
               for i, n in enumerate(("sim-a", "sim-b"))}
    for sim in started.values():
        sim.start()
    try:
        yield started
    finally:
        for sim in started.values():
            sim.stop()


METRICS_KEY = "reload-metrics-key"


def rejected(url: str) -> float:
    scraped = httpx.get(f"{url}/metrics", timeout=5,
                        headers={"authorization": f"Bearer {METRICS_KEY}"})
    found = re.search(r'^gateway_policy_reloads_total\{result="rejected"\} (\S+)$',
                      scraped.raise_for_status().text, re.M)
    return float(found.group(1)) if found else 0.0


def wait_for(check: Callable[[], bool], what: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_broken_policy_files_never_interrupt_serving(
    tmp_path: Path, sims: dict[str, ServerThread]
) -> None:
    ports = {n: s.port for n, s in sims.items()}
    good = sims_policy(ports)
    only_b = sims_policy({"sim-b": ports["sim-b"]})
    path = tmp_path / "policy.yaml"
    path.write_text(good)
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    settings = Settings(database_url=db_url, policy_path=path, policy_poll_interval_s=0.05,
                        audit_spool_dir=tmp_path / "spool", metrics_key=METRICS_KEY)
    failures: list[str] = []
    served: list[str] = []
    stop = threading.Event()

    def client(url: str) -> None:
        with httpx.Client(base_url=url, timeout=10,
                          headers={"authorization": f"Bearer {key}"}) as http:
            while not stop.is_set():
                resp = http.post("/v1/chat/completions", json={
                    "model": "auto", "max_tokens": 2,
                    "messages": [{"role": "user", "content": "still there?"}]})
                if resp.status_code == 200:
                    served.append(resp.headers["x-gateway-backend"])
                else:
                    failures.append(f"{resp.status_code} {resp.text[:200]}")

    with serve(create_app(settings)) as gw, ThreadPoolExecutor(CLIENTS) as pool:
        loops = [pool.submit(client, gw.url) for _ in range(CLIENTS)]
        try:
            for name, edit in broken_edits(good).items():
                before = rejected(gw.url)
                edit(path)
                if name == "deleted":
                    time.sleep(0.3)
                else:
                    wait_for(lambda b=before: rejected(gw.url) > b, f"{name} to be rejected")
                ready = httpx.get(f"{gw.url}/readyz", timeout=5)
                assert ready.status_code == 200, (name, ready.text)
                path.write_text(good)  # restore, so the next edit is judged on its own
                time.sleep(0.15)
            served.clear()
            path.write_text(only_b)  # a valid edit still takes effect
            wait_for(lambda: served[-CLIENTS:] == ["sim-b"] * CLIENTS and len(served) > 10,
                     "the valid edit to serve")
        finally:
            stop.set()
            for loop in loops:
                loop.result(timeout=20)
    assert failures == [], failures[:5]
