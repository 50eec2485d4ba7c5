"""SIGTERM to `gateway serve` mid-stream: new connections are refused at once, the streams in
flight finish normally, the process exits 0 within its grace period, and every request the
clients saw has its audit row (the lifespan drained the audit queue before exiting)."""

from __future__ import annotations

import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest

from tests.e2e.conftest import create_key
from tests.resilience.processes import Process, sims_policy, start_gateway, start_sim

pytestmark = pytest.mark.resilience

STREAMS = 4
GRACE_S = 20
HELLO = [{"role": "user", "content": "Take your time answering."}]


@pytest.fixture
def slow_sim(tmp_path: Path) -> Iterator[Process]:
    sim = start_sim(tmp_path, "sim", decode_step_base_s=0.12)  # ~16-24 tokens: ≈ 2-3 s
    try:
        yield sim.wait_healthy()
    finally:
        sim.stop()


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except OSError:
        return True


def test_sigterm_lets_streams_finish_then_exits_cleanly(tmp_path: Path, slow_sim: Process) -> None:
    db_path = tmp_path / "gw.db"
    db_url = f"sqlite+aiosqlite:///{db_path}"
    key = create_key(db_url, "acme")
    policy = tmp_path / "policy.yaml"
    policy.write_text(sims_policy({"sim": slow_sim.port}))
    gw = start_gateway(tmp_path, policy, db_url, shutdown_grace_s=str(GRACE_S))
    try:
        gw.wait_healthy()
        started = threading.Barrier(STREAMS + 1, timeout=30)

        def stream() -> tuple[str, str | None, int]:
            with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0,
                               timeout=30) as client:
                raw = client.chat.completions.with_raw_response.create(
                    model="auto", messages=HELLO, max_tokens=24, stream=True)  # type: ignore[arg-type]
                finish, chunks = None, 0
                for chunk in raw.parse():
                    chunks += 1
                    if chunks == 1:
                        started.wait()
                    if chunk.choices and chunk.choices[0].finish_reason:
                        finish = chunk.choices[0].finish_reason
                return raw.headers["x-request-id"], finish, chunks

        with ThreadPoolExecutor(STREAMS) as pool:
            runs = [pool.submit(stream) for _ in range(STREAMS)]
            started.wait()  # every stream is under way
            gw.signal(signal.SIGTERM)
            stopped_at = time.monotonic()
            deadline = stopped_at + 2
            while not refused(gw.port):
                assert time.monotonic() < deadline, "still accepting connections after SIGTERM"
                time.sleep(0.05)
            assert not all(r.done() for r in runs), "streams ended before the listener closed"
            results = [r.result(timeout=GRACE_S) for r in runs]
        code = gw.proc.wait(timeout=GRACE_S)
        took_s = time.monotonic() - stopped_at
    finally:
        gw.stop()
    assert code == 0, gw.output()
    assert took_s < GRACE_S, took_s
    for request_id, finish, chunks in results:
        assert finish in ("stop", "length"), (request_id, finish)
        assert chunks > 10
    with sqlite3.connect(db_path) as conn:
        recorded = {r[0] for r in conn.execute("SELECT request_id FROM audit_log")}
    assert {r[0] for r in results} <= recorded
