"""When the budget store (Redis) is down, each tenant gets what its policy chose: fail_open
serves unmetered (and says so), fail_closed refuses with an OpenAI-shaped 503. Neither waits
long: both are answered well within 2 s, whether Redis refuses connections or never answers.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import ADMIN_KEY, FAST, create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import ServerThread, free_port, serve

HELLO = [{"role": "user", "content": "Is the budget service up?"}]
BOUND_S = 2.0
OPEN, CLOSED, UNLISTED = "open-co", "closed-co", "unlisted-co"


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 1024\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  auto: [sim]\n"
        "tenants:\n"
        f"  {OPEN}:\n    budget: {{daily_usd: 10}}\n    on_budget_store_error: fail_open\n"
        f"  {CLOSED}:\n    budget: {{daily_usd: 10}}\n    on_budget_store_error: fail_closed\n"
    )


@dataclass
class BrokenRedisGateway:
    url: str
    keys: dict[str, str]
    audit_path: Path

    def client(self, tenant: str) -> openai.OpenAI:
        # A short SDK timeout as well: a hang fails the test instead of stalling the suite.
        return openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.keys[tenant],
                             max_retries=0, timeout=10)

    def store_errors(self) -> float:
        """gateway_budget_store_errors_total{operation="admit"} from GET /metrics."""
        text = httpx.get(f"{self.url}/metrics", timeout=5,
                         headers={"authorization": f"Bearer {ADMIN_KEY}"}).text
        found = re.search(
            r'^gateway_budget_store_errors_total\{operation="admit"\} (\S+)$', text, re.M
        )
        return float(found.group(1)) if found else 0.0


@pytest.fixture(scope="module", params=["refused", "silent"])
def broken(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BrokenRedisGateway]:
    """A gateway whose Redis is a closed port ("refused": connections fail at once) or a
    socket that accepts connections and never answers ("silent": only timeouts end a call)."""
    tmp = tmp_path_factory.mktemp(f"redis-{request.param}")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    keys = {t: create_key(db_url, t) for t in (OPEN, CLOSED, UNLISTED)}
    listener: socket.socket | None = None
    if request.param == "silent":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # never accepted: the kernel completes a handshake or two, no more
        redis_port = int(listener.getsockname()[1])
    else:
        redis_port = free_port()  # bound and released: nothing listens there
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    sim.start()
    settings = Settings(
        database_url=db_url,
        admin_key=ADMIN_KEY,
        redis_url=f"redis://127.0.0.1:{redis_port}/0",
        redis_timeout_s=0.25,
        audit_log_path=str(tmp / "audit.jsonl"),
        upstream_read_timeout_s=5.0,
    )
    try:
        with serve(create_app(settings, policy=parse_policy(policy_yaml(sim.port)))) as server:
            yield BrokenRedisGateway(server.url, keys, tmp / "audit.jsonl")
    finally:
        sim.stop()
        if listener is not None:
            listener.close()


@dataclass
class Outcome:
    elapsed_s: float
    status: int
    headers: dict[str, str]
    body: dict[str, Any]


def timed_call(gw: BrokenRedisGateway, tenant: str) -> Outcome:
    """One chat completion through the SDK; an error status is returned, not raised."""
    with gw.client(tenant) as client:
        started = time.monotonic()
        try:
            raw = client.chat.completions.with_raw_response.create(
                model="auto", messages=HELLO, max_tokens=4  # type: ignore[arg-type]
            )
            response = raw.http_response
        except openai.APIStatusError as exc:
            response = exc.response
        elapsed = time.monotonic() - started
        return Outcome(elapsed, response.status_code, dict(response.headers), response.json())


@pytest.mark.parametrize("tenant", [OPEN, UNLISTED])
def test_fail_open_serves_the_request_unmetered_quickly(
    broken: BrokenRedisGateway, tenant: str
) -> None:
    """A tenant that chose fail_open (or has no policy entry: fail_open is the default)."""
    before = broken.store_errors()
    outcome = timed_call(broken, tenant)
    assert outcome.status == 200, outcome.body
    assert outcome.headers["x-gateway-unmetered"] == "true"
    assert outcome.body["choices"][0]["message"]["content"]
    assert outcome.elapsed_s < BOUND_S, outcome.elapsed_s
    assert broken.store_errors() >= before + 1


def test_fail_closed_refuses_with_an_openai_shaped_503_quickly(
    broken: BrokenRedisGateway,
) -> None:
    before = broken.store_errors()
    outcome = timed_call(broken, CLOSED)
    assert outcome.status == 503, outcome.body
    assert set(outcome.body) == {"error"}
    error = outcome.body["error"]
    assert error["type"] == "service_unavailable"
    assert error["code"] == "budget_store_unavailable"
    assert error["message"]
    assert "x-gateway-unmetered" not in outcome.headers
    assert outcome.elapsed_s < BOUND_S, outcome.elapsed_s
    assert broken.store_errors() >= before + 1


async def test_a_burst_is_answered_within_the_bound(broken: BrokenRedisGateway) -> None:
    """More requests at once than the Redis connection pool holds (64) must not queue into a
    hang: each still gets its tenant's answer in time. One event loop drives them all (threads
    would measure this test's own GIL contention with the in-process gateway, not the gateway).
    """
    tenants = [OPEN, CLOSED] * 40
    clients = {
        t: openai.AsyncOpenAI(base_url=f"{broken.url}/v1", api_key=broken.keys[t],
                              max_retries=0, timeout=10)
        for t in (OPEN, CLOSED)
    }

    async def call(tenant: str) -> tuple[float, int, str | None]:
        started = time.monotonic()
        try:
            raw = await clients[tenant].chat.completions.with_raw_response.create(
                model="auto", messages=HELLO, max_tokens=4  # type: ignore[arg-type]
            )
            response = raw.http_response
        except openai.APIStatusError as exc:
            response = exc.response
        return (time.monotonic() - started, response.status_code,
                response.headers.get("x-gateway-unmetered"))

    try:
        outcomes = await asyncio.gather(*(call(t) for t in tenants))
    finally:
        for client in clients.values():
            await client.close()
    for tenant, (elapsed_s, status, unmetered) in zip(tenants, outcomes, strict=True):
        assert elapsed_s < BOUND_S, (tenant, elapsed_s)
        if tenant == OPEN:
            assert (status, unmetered) == (200, "true")
        else:
            assert status == 503


def test_usage_says_the_budget_service_is_unavailable(broken: BrokenRedisGateway) -> None:
    resp = httpx.get(f"{broken.url}/v1/usage", timeout=5,
                     headers={"authorization": f"Bearer {broken.keys[OPEN]}"})
    assert resp.status_code == 503, resp.text
    assert resp.json()["error"]["code"] == "budget_store_unavailable"


def test_the_audit_record_marks_an_unmetered_request(broken: BrokenRedisGateway) -> None:
    outcome = timed_call(broken, OPEN)
    assert outcome.status == 200, outcome.body
    request_id = outcome.headers["x-request-id"]
    deadline = time.monotonic() + 5
    record: dict[str, object] | None = None
    while record is None and time.monotonic() < deadline:
        for entry in mirror_rows(broken.audit_path):
            if entry.get("request_id") == request_id:
                record = entry
        time.sleep(0.05)
    assert record is not None, "the request was not audited"
    assert record.get("unmetered") is True, record
