"""A gateway on real Redis admits from budget leases: the official SDK's requests are
admitted locally, far fewer calls reach Redis, and the tenant's usage still adds up to the
cost each response reported, to the micro-dollar."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.budget.redis_keys import PREFIX
from gateway.budget.redis_store import make_client
from gateway.db.engine import create_engine
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.tenancy.repository import TenantRepository
from tests.e2e.conftest import ADMIN_KEY, FAST, create_key
from tests.support.servers import ServerThread, serve

pytestmark = pytest.mark.redis
TENANT = "lease-co"
REQUESTS = 60


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 1024\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  auto: [sim]\n"
        f"tenants:\n  {TENANT}:\n    budget: {{daily_usd: 100}}\n"
        "    limits: {rpm: 100000, tpm: 100000000}\n"
    )


@pytest.fixture
def gateway(tmp_path: Path, redis_url: str) -> Iterator[tuple[str, str]]:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, TENANT)
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST))).start()
    settings = Settings(database_url=db_url, redis_url=redis_url, admin_key=ADMIN_KEY,
                        audit_spool_dir=tmp_path / "spool")
    try:
        with serve(create_app(settings, policy=parse_policy(policy_yaml(sim.port)))) as gw:
            yield gw.url, key
    finally:
        sim.stop()
        asyncio.run(forget(db_url, redis_url))


async def forget(db_url: str, redis_url: str) -> None:
    """Delete this test's tenant's budget keys and nothing else."""
    engine = create_engine(db_url)
    tenant = await TenantRepository(engine).get_tenant(TENANT)
    await engine.dispose()
    assert tenant is not None
    client = make_client(redis_url, timeout_s=5.0)
    stale = [k async for k in client.scan_iter(match=f"{PREFIX}:{{{tenant.id}}}:*")]
    if stale:
        await client.delete(*stale)
    await client.aclose()


def counter(text: str, name: str) -> float:
    found = re.search(rf"^{name} (\S+)$", text, re.M)
    assert found is not None, name
    return float(found.group(1))


def test_requests_are_admitted_from_leases_and_usage_adds_up(
    gateway: tuple[str, str],
) -> None:
    url, key = gateway
    total = Decimal(0)
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0) as client:
        for _ in range(REQUESTS):
            raw = client.chat.completions.with_raw_response.create(
                model="auto", max_tokens=8,
                messages=[{"role": "user", "content": "Count to three."}])
            total += Decimal(raw.headers["x-gateway-cost-usd"])
    metrics = httpx.get(f"{url}/metrics", timeout=5,
                        headers={"authorization": f"Bearer {ADMIN_KEY}"}).text
    admitted = counter(metrics, "gateway_budget_admitted_locally_total")
    leases = counter(metrics, "gateway_budget_leases_total")
    assert admitted == REQUESTS
    assert leases < REQUESTS / 3, (leases, admitted)
    usage = httpx.get(f"{url}/v1/usage", timeout=5,
                      headers={"authorization": f"Bearer {key}"}).json()
    (tenant_scope,) = [s for s in usage["scopes"] if s["scope"] == "tenant"]
    assert Decimal(str(tenant_scope["spent_today_usd"])) == total
    assert Decimal(str(tenant_scope["reserved_usd"])) == 0
