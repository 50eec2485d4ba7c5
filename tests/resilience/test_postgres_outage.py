"""Postgres stops for a minute under a steady stream of requests, then comes back: every
request is answered, and every request the client saw has exactly one audit row, in its
chain's order, with every link and hash intact."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path

import httpx
import openai
import pytest
from sqlalchemy import func, select

from gateway.app import create_app
from gateway.audit.records import GENESIS, Row, from_db, row_hash
from gateway.db.audit_tables import audit_daily, audit_log
from gateway.db.engine import create_engine
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.resilience.conftest import PostgresCluster
from tests.support.servers import ServerThread, serve

pytestmark = pytest.mark.resilience

OUTAGE_S = 60.0
CLIENTS = 4
HELLO = [{"role": "user", "content": "Is the audit log keeping up?"}]


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 1024\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  auto: [sim]\n"
    )


class Traffic:
    """Clients on the official SDK sending requests (every third one streamed) until told to
    stop; each remembers the x-request-id of every answer it got."""

    def __init__(self, url: str, key: str) -> None:
        self._url, self._key = url, key
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(CLIENTS)
        self._runs = [self._pool.submit(self._client) for _ in range(CLIENTS)]

    def _client(self) -> tuple[list[str], list[str]]:
        seen: list[str] = []
        failed: list[str] = []
        with openai.OpenAI(base_url=f"{self._url}/v1", api_key=self._key, max_retries=0,
                           timeout=20) as client:
            n = 0
            while not self._stop.is_set():
                n += 1
                try:
                    raw = client.chat.completions.with_raw_response.create(
                        model="auto", messages=HELLO, max_tokens=4, stream=n % 3 == 0)
                    answer = raw.parse()
                    if n % 3 == 0:
                        for _ in answer:  # type: ignore[attr-defined]
                            pass
                    seen.append(raw.headers["x-request-id"])
                except openai.APIError as exc:
                    failed.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.01)  # a steady stream, not a benchmark
        return seen, failed

    def stop(self) -> tuple[list[str], list[str]]:
        self._stop.set()
        seen: list[str] = []
        failed: list[str] = []
        for run in self._runs:
            s, f = run.result(timeout=60)
            seen += s
            failed += f
        self._pool.shutdown()
        return seen, failed

    def running(self) -> int:
        return sum(1 for r in self._runs if not r.done())


METRICS_KEY = "outage-metrics-key"


def metric(url: str, name: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10,
                     headers={"authorization": f"Bearer {METRICS_KEY}"}).text
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    assert found, name
    return float(found.group(1))


def wait_for(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


async def stored(db_url: str) -> tuple[list[Row], int]:
    engine = create_engine(db_url)
    try:
        async with engine.connect() as conn:
            rows = [from_db(r._asdict()) for r in await conn.execute(
                select(audit_log).order_by(audit_log.c.chain_id, audit_log.c.seq))]
            requests = int(await conn.scalar(select(func.sum(audit_daily.c.requests))) or 0)
    finally:
        await engine.dispose()
    return rows, requests


def test_a_minute_without_postgres_loses_no_audit_row(
    dedicated_postgres: PostgresCluster, tmp_path: Path
) -> None:
    db_url = dedicated_postgres.url
    key = create_key(db_url, "acme")  # migrates the fresh cluster, too
    settings = Settings(
        database_url=db_url,
        audit_spool_dir=tmp_path / "spool",
        metrics_key=METRICS_KEY,
        # Default key and limits cache TTLs (30 s, 5 s), shorter than the outage: serving
        # goes on from the last known values while the database is away.
        upstream_read_timeout_s=10,
    )
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    sim.start()
    try:
        with serve(create_app(settings, policy=parse_policy(policy_yaml(sim.port)))) as gw:
            traffic = Traffic(gw.url, key)
            wait_for(lambda: metric(gw.url, "gateway_audit_rows_written_total") > 0, 30,
                     "rows written before the outage")
            dedicated_postgres.stop()
            outage_ends = time.monotonic() + OUTAGE_S
            wait_for(lambda: metric(gw.url, "gateway_audit_spool_rows") > 0, 20,
                     "rows spooled")
            ready = httpx.get(f"{gw.url}/ready", timeout=10).json()
            # Down, but keys verified before the outage are served: still in rotation.
            assert ready["checks"]["database"].startswith("degraded: unreachable"), ready
            assert ready["checks"]["audit"].startswith("ok ("), ready  # spooled, on disk
            time.sleep(max(0.0, outage_ends - time.monotonic()))
            assert traffic.running() == CLIENTS  # every client still going
            during = metric(gw.url, "gateway_audit_spool_rows")
            dedicated_postgres.start()
            time.sleep(3)  # requests keep flowing while the spool is replayed
            seen, failed = traffic.stop()
            wait_for(lambda: metric(gw.url, "gateway_audit_spool_rows") == 0, 30,
                     "the spool to be replayed")
            assert metric(gw.url, "gateway_audit_spool_errors_total") == 0
            assert metric(gw.url, "gateway_audit_rows_dropped_total") == 0
            assert metric(gw.url, "gateway_audit_write_failures_total") >= 1
            ready = httpx.get(f"{gw.url}/ready", timeout=10).json()
            assert ready["checks"]["audit"] == "ok", ready
    finally:
        sim.stop()

    assert failed == [], failed[:5]
    assert during > 100, "too few requests during the outage to mean anything"
    rows, daily = asyncio.run(stored(db_url))
    by_request: dict[str, Row] = {}
    for row in rows:
        assert row["request_id"] not in by_request, f"two rows for {row['request_id']}"
        by_request[row["request_id"]] = row
    missing = set(seen) - set(by_request)
    assert not missing, f"{len(missing)} of {len(seen)} requests have no audit row"
    assert len(rows) == len(seen) == daily
    chains = {row["chain_id"] for row in rows}
    assert len(chains) == 1  # one gateway process, one chain
    assert [row["seq"] for row in rows] == list(range(1, len(rows) + 1))
    head = GENESIS
    for row in rows:
        assert row["prev_hash"] == head and row_hash(row) == row["row_hash"], row["seq"]
        head = row["row_hash"]
    # Recorded in the order requests finished, so the chain's order is time order.
    assert all(a["ts"] <= b["ts"] for a, b in pairwise(rows))
