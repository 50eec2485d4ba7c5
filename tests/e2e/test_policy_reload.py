"""Hot reload under traffic: valid edits swap in, invalid ones are refused and counted, and no
request fails meanwhile. Also the admin explain and reload endpoints."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from tests.e2e.conftest import ADMIN_KEY, Gateway, create_key
from tests.support.servers import serve


def policy_for(gw: Gateway, backend: str) -> str:
    port = gw.sims[backend].port
    return (f"version: 1\nbackends:\n  - name: {backend}\n    provider: vllm\n"
            f"    base_url: http://127.0.0.1:{port}/v1\n    model: sim-model\n"
            "    context_window: 1024\nmodels:\n  auto: [" + backend + "]\n")


@dataclass
class Reloading:
    url: str
    key: str
    path: Path


@pytest.fixture
def reloading(gw: Gateway, tmp_path: Path) -> Iterator[Reloading]:
    path = tmp_path / "policy.yaml"
    path.write_text(policy_for(gw, "sim-a"))
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    settings = Settings(database_url=db_url, policy_path=path, policy_poll_interval_s=0.05,
                        admin_key=ADMIN_KEY, audit_log_path=str(tmp_path / "audit.jsonl"))
    with serve(create_app(settings)) as server:
        yield Reloading(server.url, key, path)


def backend_of(r: Reloading) -> str:
    resp = httpx.post(f"{r.url}/v1/chat/completions", timeout=10,
                      headers={"Authorization": f"Bearer {r.key}"},
                      json={"model": "auto", "max_tokens": 1,
                            "messages": [{"role": "user", "content": "hi"}]})
    assert resp.status_code == 200, resp.text
    return resp.headers["x-gateway-backend"]


def reloads(r: Reloading) -> dict[str, float]:
    out = {}
    scraped = httpx.get(f"{r.url}/metrics", headers={"authorization": f"Bearer {ADMIN_KEY}"})
    for line in scraped.raise_for_status().text.splitlines():
        if line.startswith("gateway_policy_reloads_total{"):
            result = line.split('result="')[1].split('"')[0]
            out[result] = float(line.rsplit(" ", 1)[1])
    return out


def wait_for(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_edits_swap_in_atomically_and_bad_edits_never_serve(gw: Gateway, reloading: Reloading):
    failures: list[str] = []
    served: list[str] = []
    stop = threading.Event()

    def traffic() -> None:
        while not stop.is_set():
            try:
                served.append(backend_of(reloading))
            except AssertionError as exc:
                failures.append(str(exc))

    worker = threading.Thread(target=traffic)
    worker.start()
    try:
        for i in range(6):
            target = "sim-b" if i % 2 == 0 else "sim-a"
            reloading.path.write_text(policy_for(gw, target))
            wait_for(lambda t=target: backend_of(reloading) == t)
            reloading.path.write_text("version: 1\nbackends: [oops\n")  # invalid YAML
            wait_for(lambda n=i: reloads(reloading).get("rejected", 0) >= n + 1)
            assert backend_of(reloading) == target  # the last good policy keeps serving
    finally:
        stop.set()
        worker.join()
    assert failures == []
    # traffic really flowed through the swaps (how much depends on the machine's load)
    assert len(served) > 5 and {"sim-a", "sim-b"} <= set(served)
    counts = reloads(reloading)
    assert counts["ok"] >= 6 and counts["rejected"] >= 6


def test_admin_reload_refuses_an_invalid_file(gw: Gateway, reloading: Reloading) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    reloading.path.write_text(policy_for(gw, "sim-b"))
    resp = httpx.post(f"{reloading.url}/admin/policy/reload", headers=admin)
    assert resp.status_code == 200 and "auto" in resp.json()["models"]
    reloading.path.write_text("version: 2\n")
    resp = httpx.post(f"{reloading.url}/admin/policy/reload", headers=admin)
    assert resp.status_code == 400 and resp.json()["error"]["type"] == "invalid_request_error"
    assert backend_of(reloading) == "sim-b"


def test_admin_explain_returns_the_decision_as_json(gw: Gateway) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    body = {"tenant": "acme", "request": {"model": "failover", "max_tokens": 5,
                                         "messages": [{"role": "user", "content": "hi"}]}}
    result = httpx.post(f"{gw.url}/admin/policy/explain", json=body, headers=admin).json()
    assert result["outcome"] == "routed" and result["primary"] == "dead"
    assert result["fallbacks"] == ["sim-a"] and result["rule"] == "model-pool"
    assert result["profile"]["prompt_tokens"] > 0
    body["request"]["model"] = "nope"
    refused = httpx.post(f"{gw.url}/admin/policy/explain", json=body, headers=admin).json()
    assert refused["outcome"] == "refused" and refused["error"]["status"] == 404
    assert httpx.post(f"{gw.url}/admin/policy/explain", json=body).status_code == 401
