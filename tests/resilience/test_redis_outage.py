"""Redis goes away while the gateway is serving, then comes back: frozen (SIGSTOP, sockets
open, no replies) and dead (SIGKILL, connections refused). Throughout, the fail_open tenant
is served unmetered (and its audit record says so), the fail_closed tenant gets an
OpenAI-shaped 503, every request is answered within the bound and the gateway keeps running;
once Redis is back, metering resumes.

A gateway whose Redis is unreachable from the start (refused or silent) is covered by
tests/e2e/test_budget_store_errors.py; this covers the transitions."""

from __future__ import annotations

import asyncio
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from pydantic import SecretStr

from gateway.app import create_app
from gateway.budget.leasing import LeasingBudgetStore
from gateway.budget.limits import AdmitRequest, BudgetLimits, ScopeLimits, periods
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.resilience.processes import sims_policy
from tests.resilience.redis_server import RedisServer
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import ServerThread, serve

pytestmark = pytest.mark.resilience

BOUND_S = 3.0
METRICS_KEY = "scrape-key-for-the-outage-test"
SCRAPE = {"authorization": f"Bearer {METRICS_KEY}"}
OPEN, CLOSED = "open-co", "closed-co"
HELLO = [{"role": "user", "content": "Is the budget service up?"}]
TENANTS = (
    "tenants:\n"
    f"  {OPEN}:\n    budget: {{daily_usd: 10}}\n    on_budget_store_error: fail_open\n"
    f"  {CLOSED}:\n    budget: {{daily_usd: 10}}\n    on_budget_store_error: fail_closed\n"
)


@dataclass
class Answer:
    elapsed_s: float
    status: int
    unmetered: bool
    request_id: str
    body: dict[str, object]


@dataclass
class Rig:
    url: str
    keys: dict[str, str]
    audit_path: Path

    def call(self, tenant: str) -> Answer:
        with openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.keys[tenant],
                           max_retries=0, timeout=10) as client:
            started = time.monotonic()
            try:
                response = client.chat.completions.with_raw_response.create(
                    model="auto", messages=HELLO, max_tokens=4).http_response  # type: ignore[arg-type]
            except openai.APIStatusError as exc:
                response = exc.response
            return Answer(time.monotonic() - started, response.status_code,
                          response.headers.get("x-gateway-unmetered") == "true",
                          response.headers.get("x-request-id", ""), response.json())

    def tokens_today(self, tenant: str) -> int:
        resp = httpx.get(f"{self.url}/v1/usage", timeout=5,
                         headers={"authorization": f"Bearer {self.keys[tenant]}"})
        assert resp.status_code == 200, resp.text
        return sum(int(scope["tokens_today"]) for scope in resp.json()["scopes"])

    def audited(self, request_id: str) -> dict[str, object]:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            for entry in mirror_rows(self.audit_path):
                if entry.get("request_id") == request_id:
                    return entry  # type: ignore[no-any-return]
            time.sleep(0.05)
        raise AssertionError(f"{request_id} was not audited")


def assert_outage_behaviour(rig: Rig, rounds: int = 3) -> None:
    for _ in range(rounds):
        served = rig.call(OPEN)
        assert served.status == 200 and served.unmetered, served
        assert served.elapsed_s < BOUND_S, served.elapsed_s
        assert rig.audited(served.request_id).get("unmetered") is True
        refused = rig.call(CLOSED)
        assert refused.status == 503, refused
        error = refused.body["error"]
        assert isinstance(error, dict) and error["code"] == "budget_store_unavailable"
        assert refused.elapsed_s < BOUND_S, refused.elapsed_s


def assert_metered(rig: Rig) -> None:
    """Both tenants served and metered again (Redis reconnects on its own)."""
    deadline = time.monotonic() + 10
    while True:
        answers = [rig.call(OPEN), rig.call(CLOSED)]
        if all(a.status == 200 and not a.unmetered for a in answers):
            break
        assert time.monotonic() < deadline, answers
        time.sleep(0.2)
    before = rig.tokens_today(OPEN)
    assert rig.call(OPEN).status == 200
    assert rig.tokens_today(OPEN) > before


def test_redis_frozen_then_dead_then_back(tmp_path: Path, redis_server: RedisServer) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    keys = {t: create_key(db_url, t) for t in (OPEN, CLOSED)}
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    sim.start()
    settings = Settings(database_url=db_url, redis_url=redis_server.url, redis_timeout_s=0.25,
                        audit_log_path=str(tmp_path / "audit.jsonl"),
                        upstream_read_timeout_s=5.0, metrics_key=SecretStr(METRICS_KEY))
    policy = parse_policy(sims_policy({"sim": sim.port}, extra=TENANTS))
    try:
        with serve(create_app(settings, policy=policy)) as gw:
            rig = Rig(gw.url, keys, tmp_path / "audit.jsonl")
            assert_metered(rig)

            redis_server.signal(signal.SIGSTOP)  # hangs: only timeouts end a call
            assert_outage_behaviour(rig)
            redis_server.signal(signal.SIGCONT)
            assert_metered(rig)

            redis_server.kill()  # down: connections refused
            # A lease taken just before (its slice reserved while Redis was up) may admit
            # for up to budget_lease_s more, by design: the outage shows once it ends.
            time.sleep(settings.budget_lease_s + 0.1)
            assert_outage_behaviour(rig)
            # Still ready: the fail_open tenant is served, so a readiness probe must not take
            # every replica out; the body and the gauge name the degraded dependency.
            ready = httpx.get(f"{gw.url}/readyz", timeout=5)
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["redis"].startswith("degraded: unreachable")
            assert OPEN in ready.json()["checks"]["redis"]
            assert 'gateway_readiness_check{check="redis"} 0.0' in httpx.get(
                f"{gw.url}/metrics", headers=SCRAPE, timeout=5).text
            assert httpx.get(f"{gw.url}/healthz", timeout=5).status_code == 200
            redis_server.start()  # same port, empty: budgets start again from zero
            assert_metered(rig)
            assert httpx.get(f"{gw.url}/readyz", timeout=5).status_code == 200
            assert 'gateway_readiness_check{check="redis"} 1.0' in httpx.get(
                f"{gw.url}/metrics", headers=SCRAPE, timeout=5).text
    finally:
        sim.stop()


def test_a_lease_settled_while_redis_is_frozen_is_recorded_once_it_is_back(
    redis_server: RedisServer,
) -> None:
    """Requests admitted from a lease keep settling locally while Redis hangs (no request
    waits on it); the lease's settle fails, is kept, and lands when Redis answers again."""

    async def main() -> None:
        client = make_client(redis_server.url, timeout_s=0.25)
        store = LeasingBudgetStore(RedisBudgetStore(client, op_timeout_s=0.5), lease_s=0.5)
        scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=10**9))
        day, month = periods(time.time())

        def ask(n: int) -> AdmitRequest:
            return AdmitRequest(f"r{n}", "t-freeze", (scope,), 1000, 10, day, month)

        for n in range(100):  # a busy key: later admissions come from leases
            admission = await store.admit(ask(n))
            assert admission.reservation is not None
            await store.settle(admission.reservation, 600, 6)
        held = [await store.admit(ask(n)) for n in range(100, 110)]
        assert store.stats.leases < 30
        redis_server.signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            for admission in held:
                assert admission.reservation is not None
                await store.settle(admission.reservation, 600, 6)
            assert time.monotonic() - started < 0.1  # nobody waited on the frozen Redis
            await store.flush(everything=True)  # the lease's own settle times out: kept
            assert store.stats.settle_failures >= 1
        finally:
            redis_server.signal(signal.SIGCONT)
        await store.flush()
        usage = await store.usage("t-freeze", "tenant", day, month)
        assert (usage.spent_day_micro_usd, usage.tokens_day) == (600 * 110, 6 * 110)
        assert (usage.reserved_micro_usd, usage.in_flight) == (0, 0)
        await store.close()
        await client.aclose()

    asyncio.run(main())
