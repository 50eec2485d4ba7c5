"""One of two engines is killed (SIGKILL) under concurrent load, streaming and not: every
request that had not started answering succeeds through the other engine; a stream already
relaying from the dead one ends with an OpenAI-shaped SSE error event (the SDK raises
APIError), and nothing hangs."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.resilience.processes import Process, sims_policy, start_sim
from tests.support.servers import serve

pytestmark = pytest.mark.resilience

CLIENTS = 8
VICTIM = "sim-a"


def hello(n: int) -> list[dict[str, str]]:
    # A prompt per request: one shared prompt would be pinned to a single engine by prefix
    # affinity, and the engine to kill might then see no streams at all.
    return [{"role": "user", "content": f"Keep going while an engine dies ({n})."}]


@dataclass
class Tally:
    ok: int = 0
    cut_streams: list[str] = field(default_factory=list)  # failed after the first chunk
    failed: list[str] = field(default_factory=list)  # failed before any answer: must not be
    relaying_on_victim: int = 0  # streams past their first chunk from the engine to kill
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def sims(tmp_path: Path) -> Iterator[dict[str, Process]]:
    # ~16-24 tokens at 50 ms a step: a stream lasts about a second, so some are mid-way when
    # the engine dies.
    started = {n: start_sim(tmp_path, n, decode_step_base_s=0.05)
               for n in ("sim-a", "sim-b")}
    try:
        yield {n: p.wait_healthy() for n, p in started.items()}
    finally:
        for proc in started.values():
            proc.stop()


def one_request(client: openai.OpenAI, n: int, tally: Tally) -> None:
    stream = n % 2 == 0
    chunks = 0
    try:
        if stream:
            finish = None
            raw = client.chat.completions.with_raw_response.create(
                model="auto", messages=hello(n), max_tokens=24, stream=True)  # type: ignore[arg-type]
            on_victim = raw.headers["x-gateway-backend"] == VICTIM
            try:
                for chunk in raw.parse():
                    chunks += 1
                    if chunks == 1 and on_victim:
                        with tally.lock:
                            tally.relaying_on_victim += 1
                    if chunk.choices and chunk.choices[0].finish_reason:
                        finish = chunk.choices[0].finish_reason
            finally:
                if chunks and on_victim:
                    with tally.lock:
                        tally.relaying_on_victim -= 1
            # A stream that just stops, with neither a finish reason nor an error event,
            # would look complete to the SDK: that is a failure too.
            assert finish is not None, f"stream ended silently after {chunks} chunks"
        else:
            answer = client.chat.completions.create(model="auto", messages=hello(n), max_tokens=24)  # type: ignore[arg-type]
            assert answer.choices[0].message.content
    except AssertionError as exc:
        with tally.lock:
            tally.failed.append(str(exc))
        return
    except openai.APIError as exc:
        with tally.lock:
            (tally.cut_streams if stream and chunks else tally.failed).append(
                f"{type(exc).__name__} after {chunks} chunks: {exc}")
        return
    with tally.lock:
        tally.ok += 1


def test_killing_an_engine_under_load_fails_only_streams_already_relaying(
    tmp_path: Path, sims: dict[str, Process]
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    policy = parse_policy(sims_policy({n: p.port for n, p in sims.items()}))
    settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool",
                        upstream_connect_timeout_s=2, upstream_read_timeout_s=10)
    tally = Tally()
    stop = threading.Event()

    def client_loop(i: int) -> None:
        with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0,
                           timeout=15) as client:
            n = i
            while not stop.is_set():
                one_request(client, n, tally)
                n += 1

    with serve(create_app(settings, policy=policy)) as gw, ThreadPoolExecutor(CLIENTS) as pool:
        loops = [pool.submit(client_loop, i) for i in range(CLIENTS)]
        try:
            deadline = time.monotonic() + 40
            while tally.ok < 4 * CLIENTS:  # warmed up: every client has had answers
                assert time.monotonic() < deadline and not tally.failed, tally.failed[:5]
                time.sleep(0.05)
            # Its own bound: a loaded machine may have spent most of the first on warming up.
            deadline = time.monotonic() + 40
            while tally.relaying_on_victim < 2:  # kill it mid-stream, not between requests
                assert time.monotonic() < deadline, "no stream relaying from the engine to kill"
                time.sleep(0.005)
            before = tally.ok
            sims[VICTIM].signal(signal.SIGKILL)
            killed_at = time.monotonic()
            time.sleep(3)
            stop.set()
            for loop in loops:
                loop.result(timeout=20)  # no client hangs
            assert time.monotonic() - killed_at < 25
        finally:
            stop.set()  # a failed assertion must not leave the clients looping
    assert tally.failed == [], tally.failed[:5]
    assert tally.ok > before
    # Streams relaying from the victim when it died got the SSE error event.
    print(f"{tally.ok} answered, {len(tally.cut_streams)} streams cut mid-way")
    assert tally.cut_streams
    for cut in tally.cut_streams:
        assert "APIError" in cut, cut
