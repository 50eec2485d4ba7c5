"""`gateway serve --workers 2`: one scrape answers for both workers. Known traffic goes in over
fresh connections (so both workers take some), and every scrape, whichever worker answers it,
counts exactly that traffic; the shared directory is emptied of an earlier run's counters."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from tests.e2e.conftest import create_key
from tests.resilience.processes import Process, gateway_process, sims_policy, start_sim
from tests.support.servers import free_port

REQUESTS = 40
METRICS_KEY = "multiprocess-metrics-key"


@dataclass
class TwoWorkers:
    gateway: Process
    tenant_key: str
    metrics_dir: Path


def leave_stale_counters(metrics_dir: Path) -> None:
    """What a crashed earlier run leaves behind: 1000 requests that this run never served."""
    metrics_dir.mkdir()
    code = ("from prometheus_client import Counter\n"
            "Counter('gateway_requests', 'x', ['tenant', 'backend', 'status'])"
            ".labels('acme', 'sim', '200').inc(1000)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                   env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)})
    assert list(metrics_dir.glob("counter_*.db"))


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[TwoWorkers]:
    # Each request spends ~0.1 s in the engine: concurrent requests overlap, and the kernel
    # hands new connections to whichever worker is free.
    sim = start_sim(tmp_path, "sim", max_num_seqs=64)
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    tenant_key = create_key(db_url, "acme")
    metrics_dir = tmp_path / "metrics"
    leave_stale_counters(metrics_dir)
    policy = tmp_path / "policy.yaml"
    gateway: Process | None = None
    try:
        sim.wait_healthy()
        policy.write_text(sims_policy({"sim": sim.port}))
        port = free_port()
        gateway = gateway_process(
            "gateway", ["serve", "--port", str(port), "--policy", str(policy), "--no-sim",
                        "--workers", "2"], tmp_path,
            {"GATEWAY_DATABASE_URL": db_url, "GATEWAY_LOG_LEVEL": "warning",
             "GATEWAY_METRICS_KEY": METRICS_KEY, "GATEWAY_METRICS_DIR": str(metrics_dir),
             "OTEL_SDK_DISABLED": "true"}, port)
        yield TwoWorkers(gateway.wait_healthy(timeout_s=90), tenant_key, metrics_dir)
    finally:
        if gateway is not None:
            gateway.stop()
        sim.stop()


def send_one(url: str, key: str) -> int:
    # a connection of its own: keep-alive would pin every request to one worker
    with httpx.Client(timeout=30, headers={"Connection": "close"}) as client:
        return client.post(url + "/v1/chat/completions", json={
            "model": "auto", "max_tokens": 4,
            "messages": [{"role": "user", "content": "count to four"}],
        }, headers={"authorization": f"Bearer {key}"}).status_code


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def scrape(url: str) -> str:
    resp = httpx.get(url + "/metrics", headers={"authorization": f"Bearer {METRICS_KEY}"},
                     timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.text


def total(text: str, name: str) -> float:
    return sum(samples(text, name).values())


def wait_until_counted(url: str, name: str, expected: float, timeout_s: float = 30) -> None:
    """Requests are counted as the audit writer drains (every 200 ms) and bridged numbers
    published (every second): wait for that pipeline, never for more traffic."""
    deadline = time.monotonic() + timeout_s
    while total(scrape(url), name) < expected:
        assert time.monotonic() < deadline, f"{name} stayed below {expected}"
        time.sleep(0.2)


def per_worker(metrics_dir: Path, tmp: Path, name: str) -> dict[str, float]:
    """Each worker's own share, merged from its files alone: what a per-worker scrape saw."""
    by_pid: dict[str, list[Path]] = defaultdict(list)
    for path in metrics_dir.glob("*.db"):
        by_pid[path.stem.rsplit("_", 1)[1]].append(path)
    shares = {}
    for pid, files in by_pid.items():
        alone = tmp / f"worker-{pid}"
        alone.mkdir(parents=True)
        for path in files:
            shutil.copy(path, alone / path.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        shares[pid] = sum(sample.value for metric in registry.collect()
                          for sample in metric.samples if sample.name == name)
    return shares


def test_one_scrape_counts_both_workers_traffic(two_workers: TwoWorkers, tmp_path: Path) -> None:
    url = two_workers.gateway.url
    # The kernel hands each new connection to whichever worker accepts first: on a quiet
    # machine one worker can take a whole round. Rounds go on until both have served, so
    # the merge below always has two workers' numbers to merge.
    sent, rounds = 0, 0
    while True:
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(lambda _: send_one(url, two_workers.tenant_key),
                                     range(REQUESTS)))
        assert statuses == [200] * REQUESTS
        sent, rounds = sent + REQUESTS, rounds + 1
        wait_until_counted(url, "gateway_requests_total", sent)
        shares = per_worker(two_workers.metrics_dir, tmp_path / f"round-{rounds}",
                            "gateway_requests_total")
        if len([n for n in shares.values() if n]) == 2:
            break
        assert rounds < 20, f"{sent} requests and one worker served them all: {shares}"

    # bridged from each worker's audit writer, so it lags by up to a publishing beat
    wait_until_counted(url, "gateway_audit_rows_written_total", sent)
    for _ in range(6):  # whichever worker answers, the same complete numbers
        text = scrape(url)
        assert samples(text, "gateway_requests_total") == {
            (("backend", "sim"), ("status", "200"), ("tenant", "acme")): sent}
        assert total(text, "gateway_request_duration_seconds_count") == sent
        assert total(text, "gateway_audit_rows_written_total") == sent
        # a gauge each worker holds a share of, summed once (not one series per worker)
        assert samples(text, "gateway_backend_in_flight") == {(("backend", "sim"),): 0.0}

    served = {pid: n for pid, n in shares.items() if n}
    assert sum(served.values()) == sent  # and the stale run's 1000 were swept away
