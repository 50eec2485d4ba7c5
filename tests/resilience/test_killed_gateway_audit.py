"""A `gateway serve` process is SIGKILLed under steady load (about 50 requests/s, every third
one streamed) against real Postgres: after a restart on the same spool directory, every
request the client saw answered has exactly one audit row, the chain is intact, and before
the restart `gateway audit verify` names the rows the journal holds but the database lacks.

It is a race (what is in flight at the kill differs every time), so it runs several times."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from sqlalchemy import select

from gateway.audit.records import GENESIS, Row, from_db, row_hash
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from tests.e2e.conftest import create_key
from tests.resilience.processes import REPO, Process, sims_policy, start_gateway, start_sim
from tests.support.databases import empty_postgres

pytestmark = [pytest.mark.resilience, pytest.mark.postgres]

CLIENTS = 5
PAUSE_S = 0.08  # per client between requests: ~50 requests/s in all
LOAD_S = 3.0


class Load:
    """Clients on the official SDK; each keeps the x-request-id of every complete answer (a
    stream counts once its last event has arrived)."""

    def __init__(self, url: str, key: str) -> None:
        self._url, self._key = url, key
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.answered: list[str] = []
        self._pool = ThreadPoolExecutor(CLIENTS)
        self._runs = [self._pool.submit(self._client, c) for c in range(CLIENTS)]

    def _client(self, c: int) -> None:
        with openai.OpenAI(base_url=f"{self._url}/v1", api_key=self._key, max_retries=0,
                           timeout=10) as client:
            n = 0
            while not self._stop.is_set():
                n += 1
                stream = (n + c) % 3 == 0
                try:
                    raw = client.chat.completions.with_raw_response.create(
                        model="auto", max_tokens=4, stream=stream,
                        messages=[{"role": "user", "content": f"count {c}-{n}"}])
                    answer = raw.parse()
                    if stream:
                        for _ in answer:  # type: ignore[attr-defined]
                            pass
                except (openai.APIError, openai.APIConnectionError):
                    continue  # cut by the kill: not answered, so no promise about it
                with self._lock:
                    self.answered.append(raw.headers["x-request-id"])
                time.sleep(PAUSE_S)

    def stop(self) -> list[str]:
        self._stop.set()
        for run in self._runs:
            run.result(timeout=60)
        self._pool.shutdown()
        return self.answered


async def audit_rows(db_url: str) -> list[Row]:
    engine = create_engine(db_url)
    try:
        async with engine.connect() as conn:
            return [from_db(r._asdict()) for r in await conn.execute(
                select(audit_log).order_by(audit_log.c.chain_id, audit_log.c.seq))]
    finally:
        await engine.dispose()


def verify(db_url: str, spool: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway", "audit", "verify", "--journal", str(spool),
         "--database-url", db_url], capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, cwd=spool.parent)


def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.mark.parametrize("run", range(3))
def test_every_answered_request_keeps_its_audit_row_through_a_kill(
    run: int, postgres_url: str, tmp_path: Path
) -> None:
    db_url = empty_postgres(postgres_url)
    key = create_key(db_url, "acme")
    spool = tmp_path / "spool"
    sim = start_sim(tmp_path, "sim", time_scale=0.05).wait_healthy()
    policy = tmp_path / "policy.yaml"
    policy.write_text(sims_policy({"sim": sim.port}))
    gateways: list[Process] = []
    try:
        first = start_gateway(tmp_path, policy, db_url, audit_spool_dir=str(spool))
        gateways.append(first)
        first.wait_healthy(timeout_s=90)
        load = Load(first.url, key)
        time.sleep(LOAD_S + run * 0.37)  # a different moment in the batch cycle each run
        first.signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
        answered = load.stop()
        assert len(answered) > 50, "too little load to mean anything"

        before = {row["request_id"] for row in asyncio.run(audit_rows(db_url))}
        lost_before = set(answered) - before
        checked = verify(db_url, spool)
        # Usually the last ~0.2 s of answered requests had not reached the database; the
        # journal can also hold a request whose answer the kill cut off (journalled, never
        # received). verify must name every answered request the database lacks, and fail
        # exactly when it names any.
        journal_only = set(re.findall(r"NOT IN DATABASE: .* request (\S+) at ",
                                      checked.stdout))
        assert lost_before <= journal_only, checked.stdout + checked.stderr
        assert checked.returncode == (4 if journal_only else 0), checked.stdout + checked.stderr

        second = start_gateway(tmp_path, policy, db_url, audit_spool_dir=str(spool))
        gateways.append(second)
        second.wait_healthy(timeout_s=90)
        wait_for(lambda: set(answered) <= {r["request_id"] for r in asyncio.run(
            audit_rows(db_url))}, 30, "the journal to be replayed")
        second.stop()
        rows = asyncio.run(audit_rows(db_url))
    finally:
        for gateway in gateways:
            gateway.stop()
        sim.stop()

    ids = [row["request_id"] for row in rows]
    assert len(ids) == len(set(ids)), "a request has two audit rows"
    assert set(answered) <= set(ids)
    killed = [row for row in rows if row["chain_id"] == rows[0]["chain_id"]]
    assert [row["seq"] for row in killed] == list(range(1, len(killed) + 1))
    head = GENESIS
    for row in killed:
        assert row["prev_hash"] == head and row_hash(row) == row["row_hash"], row["seq"]
        head = row["row_hash"]
    after = verify(db_url, spool)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "NOT IN DATABASE" not in after.stdout
