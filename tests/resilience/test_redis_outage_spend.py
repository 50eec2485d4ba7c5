"""Spend across a Redis outage, measured: a fail_open tenant with a small daily budget spends
half of it, Redis is killed mid-run (the replica serves unmetered, within its configured share
of what was left), then Redis comes back empty. Its spend is rebuilt from the audit log, so
the tenant is refused once the audited total reaches the budget: no second budget, and the
outage's unmetered spend counted."""

from __future__ import annotations

import time
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
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

TENANT = "thrifty"
BUDGET_MICRO_USD = 20_000  # $0.02 a day: ~50 requests of this test's size
SHARE = 0.25
PROMPT = [{"role": "user", "content": "Tell me a long story about a careful accountant."}]
POLICY = (f"tenants:\n  {TENANT}:\n    budget: {{daily_usd: {BUDGET_MICRO_USD / 1e6}}}\n"
          "    on_budget_store_error: fail_open\n")


def call(url: str, key: str) -> tuple[int, str]:
    """(status, error code or '')."""
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=10) as client:
        try:
            client.chat.completions.create(model="auto", messages=PROMPT,  # type: ignore[arg-type]
                                           max_tokens=200)
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            return exc.status_code, str(body.get("code") or "")
        return 200, ""


def audited(path: Path, answered: int) -> list[dict[str, object]]:
    """The audit rows of the answered requests, once all are written."""
    deadline = time.monotonic() + 10
    while True:
        rows = [r for r in mirror_rows(path) if r.get("status") == 200]
        if len(rows) >= answered:
            return rows
        assert time.monotonic() < deadline, (len(rows), answered)
        time.sleep(0.05)


def spent(rows: list[dict[str, object]], *, unmetered: bool | None = None) -> int:
    return sum(int(r["cost_micro_usd"]) for r in rows  # type: ignore[call-overload]
               if unmetered is None or r.get("unmetered") is unmetered)


def test_redis_killed_mid_run_overspends_at_most_the_share_and_nothing_after(
    tmp_path: Path, redis_server: RedisServer,
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, TENANT)
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))
    sim.start()
    mirror = tmp_path / "audit.jsonl"
    settings = Settings(database_url=db_url, redis_url=redis_server.url, redis_timeout_s=0.25,
                        audit_log_path=str(mirror), upstream_read_timeout_s=5.0,
                        budget_fail_open_share=SHARE)
    policy = parse_policy(sims_policy({"sim": sim.port}, extra=POLICY))
    answered = 0
    try:
        with serve(create_app(settings, policy=policy)) as gw:
            while spent(audited(mirror, answered)) < BUDGET_MICRO_USD // 2:
                assert call(gw.url, key) == (200, "")
                answered += 1
            before = spent(audited(mirror, answered))

            redis_server.kill()
            time.sleep(settings.budget_lease_s + 0.1)  # a lease taken before may still admit
            outage: list[tuple[int, str]] = []
            for _ in range(200):
                outage.append(call(gw.url, key))
                if outage[-1][0] != 200:
                    break
            answered += sum(1 for status, _ in outage if status == 200)
            assert outage[-1] == (503, "budget_store_unavailable"), outage[-3:]
            rows = audited(mirror, answered)
            unmetered = spent(rows, unmetered=True)
            assert 0 < unmetered <= SHARE * (BUDGET_MICRO_USD - before)

            redis_server.start()  # the same port, no data: the budget must not start again
            after: list[tuple[int, str]] = []
            for _ in range(200):
                after.append(call(gw.url, key))
                if after[-1][0] == 429:
                    break
            assert after[-1] == (429, "insufficient_quota"), after[-3:]
            answered += sum(1 for status, _ in after if status == 200)
            total = spent(audited(mirror, answered))
            # Everything audited (before, unmetered during, metered after) within the budget.
            assert total <= BUDGET_MICRO_USD, (before, unmetered, total)
    finally:
        sim.stop()
