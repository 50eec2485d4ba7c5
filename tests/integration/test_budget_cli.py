"""`gateway budgets show|set|clear` and `gateway usage` against a real database (SQLite and
Postgres), a real Redis, and a running gateway that must obey what the CLI wrote."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from click.testing import CliRunner, Result
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app import create_app
from gateway.budget.limits import AdmitRequest, BudgetLimits, ScopeLimits, periods
from gateway.budget.limits_repository import LimitsRepository
from gateway.budget.redis_keys import PREFIX
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.cli.main import cli
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.tenancy.repository import TenantRepository
from tests.support.servers import ServerThread, free_port, serve

TENANT = "acme"
POLICY = """\
version: 1
backends:
  - name: sim
    provider: vllm
    base_url: http://127.0.0.1:{port}/v1
    model: sim-model
    context_window: 1024
    quality_tier: 2
    price_per_mtok_usd: {{input: 1.0, output: 2.0}}
models:
  auto: [sim]
tenants:
  acme:
    budget: {{monthly_usd: 100}}
    per_key: {{limits: {{rpm: 60}}}}
    tags:
      batch: {{budget: {{daily_usd: 1}}}}
"""


@dataclass
class Setup:
    engine: AsyncEngine
    db_url: str
    policy_path: Path
    tenant_id: str
    key: str
    key_id: str
    other_key_id: str  # a key of another tenant

    def env(self, **extra: str | None) -> dict[str, str | None]:
        # None unsets: whatever the developer's shell exports must not leak into the CLI.
        return {"GATEWAY_DATABASE_URL": self.db_url, "GATEWAY_POLICY_PATH": str(self.policy_path),
                "GATEWAY_REDIS_URL": None, "GATEWAY_LIMITS_CACHE_TTL_S": None, **extra}

    async def gateway(self, *args: str, **env: str | None) -> Result:
        """Run `gateway ARGS` in a thread: the CLI calls asyncio.run, which cannot nest."""
        return await asyncio.to_thread(
            CliRunner().invoke, cli, list(args), env=self.env(**env), catch_exceptions=False
        )

    async def show(self, *args: str) -> dict[str, Any]:
        result = await self.gateway("budgets", "show", TENANT, "--json", *args)
        assert result.exit_code == 0, result.output
        report: dict[str, Any] = orjson.loads(result.stdout)
        return report

    async def overrides(self) -> dict[str, Any]:
        return dict(await LimitsRepository(self.engine).overrides(self.tenant_id))


def effective(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["scope"]: entry for entry in report["effective"]}


@pytest.fixture
def sim() -> Iterator[ServerThread]:
    server = ServerThread(create_sim_app(SimConfig(model_name="sim-model", time_scale=0.05,
                                                   max_model_len=1024)))
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def setup(engine: AsyncEngine, tmp_path: Path, sim: ServerThread) -> AsyncIterator[Setup]:
    repo = TenantRepository(engine)
    key, key_row = await repo.create_key(await repo.ensure_tenant(TENANT))
    _, other = await repo.create_key(await repo.ensure_tenant("globex"))
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(POLICY.format(port=sim.port))
    yield Setup(engine, engine.url.render_as_string(hide_password=False), policy_path,
                key_row.tenant_id, key, key_row.id, other.id)


async def test_set_show_and_clear_overrides_of_the_policy(setup: Setup) -> None:
    before = effective(await setup.show())
    assert set(before) == {"tenant", "tag:batch"}  # no key scope without --key-id
    assert before["tenant"]["source"] == "policy"
    assert before["tenant"]["budget"]["monthly_usd"] == "100.000000"
    assert before["tag:batch"]["budget"]["daily_usd"] == "1.000000"
    with_key = effective(await setup.show("--key-id", setup.key_id))
    assert with_key[f"key:{setup.key_id}"]["limits"]["rpm"] == 60

    result = await setup.gateway("budgets", "set", TENANT, "--daily-usd", "5", "--rpm", "100")
    assert result.exit_code == 0, result.output
    assert await setup.overrides() == {
        "tenant": ({"daily_usd": 5.0, "soft_limit": 0.8}, {"rpm": 100})
    }
    # Options not given are kept; `none` drops one.
    result = await setup.gateway("budgets", "set", TENANT, "--rpm", "none", "--tpm", "1000")
    assert result.exit_code == 0, result.output
    assert await setup.overrides() == {
        "tenant": ({"daily_usd": 5.0, "soft_limit": 0.8}, {"tpm": 1000})
    }
    result = await setup.gateway("budgets", "set", TENANT, "--scope", f"key:{setup.key_id}",
                                 "--concurrent", "2", "--soft-limit", "0.5",
                                 "--daily-tokens", "5000")
    assert result.exit_code == 0, result.output

    report = await setup.show("--key-id", setup.key_id)
    now = effective(report)
    tenant = now["tenant"]
    # An override replaces the policy's setting of its scope as a whole.
    assert tenant["source"] == "override"
    assert tenant["budget"]["daily_usd"] == "5.000000"
    assert tenant["budget"]["monthly_usd"] is None
    assert tenant["limits"] == {"rpm": None, "tpm": 1000, "concurrent": None}
    key = now[f"key:{setup.key_id}"]
    assert key["source"] == "override" and key["limits"]["concurrent"] == 2
    assert key["budget"]["daily_tokens"] == 5000 and key["budget"]["soft_limit"] == 0.5
    assert now["tag:batch"]["source"] == "policy"
    assert report["policy"]["budget"]["monthly_usd"] == 100

    table = await setup.gateway("budgets", "show", TENANT)
    assert table.exit_code == 0
    assert any(line.split()[:3] == ["tenant", "override", "5.000000"]
               for line in table.stdout.splitlines()), table.stdout

    result = await setup.gateway("budgets", "clear", TENANT, "--scope", "tenant")
    assert result.exit_code == 0, result.output
    assert effective(await setup.show())["tenant"]["budget"]["monthly_usd"] == "100.000000"
    again = await setup.gateway("budgets", "clear", TENANT, "--scope", "tenant")
    assert again.exit_code == 1 and "no override" in again.output
    assert set(await setup.overrides()) == {f"key:{setup.key_id}"}


@pytest.mark.parametrize(("args", "message"), [
    (["--soft-limit", "1.5"], "--soft-limit"),
    (["--rpm", "0"], "--rpm"),
    (["--daily-usd", "-1"], "--daily-usd"),
    (["--monthly-tokens", "1.5"], "not an integer"),
    (["--scope", "everyone", "--rpm", "5"], "scope must be"),
    (["--scope", "key:no-such-key", "--rpm", "5"], "has no key"),
    ([], "at least one"),
])
async def test_set_refuses_what_the_policy_schema_refuses_and_writes_nothing(
    setup: Setup, args: list[str], message: str
) -> None:
    result = await setup.gateway("budgets", "set", TENANT, *args)
    assert result.exit_code != 0
    assert message in result.output, result.output
    assert await setup.overrides() == {}


async def test_set_refuses_a_key_of_another_tenant_and_an_unknown_tenant(setup: Setup) -> None:
    foreign = await setup.gateway("budgets", "set", TENANT, "--scope",
                                  f"key:{setup.other_key_id}", "--rpm", "5")
    assert foreign.exit_code == 1 and "has no key" in foreign.output
    unknown = await setup.gateway("budgets", "set", "nobody", "--rpm", "5")
    assert unknown.exit_code == 1 and "no tenant named 'nobody'" in unknown.output
    assert await setup.overrides() == {}


async def test_a_running_gateway_obeys_what_the_cli_set(setup: Setup, tmp_path: Path) -> None:
    settings = Settings(database_url=setup.db_url, limits_cache_ttl_s=0,
                        audit_log_path=str(tmp_path / "audit.jsonl"))
    app = create_app(settings, policy=parse_policy(setup.policy_path.read_text()))
    hello = [{"role": "user", "content": "Hello"}]
    with serve(app) as server:
        client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key=setup.key,
                                    max_retries=0, timeout=10)
        try:
            await client.chat.completions.create(model="auto", messages=hello,  # type: ignore[arg-type]
                                                 max_tokens=2)
            result = await setup.gateway("budgets", "set", TENANT, "--daily-usd", "0")
            assert result.exit_code == 0, result.output
            with pytest.raises(openai.RateLimitError) as refused:
                await client.chat.completions.create(model="auto", messages=hello,  # type: ignore[arg-type]
                                                     max_tokens=2)
            assert refused.value.code == "insufficient_quota"
            result = await setup.gateway("budgets", "clear", TENANT, "--scope", "tenant")
            assert result.exit_code == 0, result.output
            await client.chat.completions.create(model="auto", messages=hello,  # type: ignore[arg-type]
                                                 max_tokens=2)
        finally:
            await client.close()


@pytest.fixture
async def redis_tenant(setup: Setup, redis_url: str) -> AsyncIterator[str]:
    """Redis for this test's tenant; its keys are deleted afterwards, nobody else's."""
    yield redis_url
    client = make_client(redis_url, timeout_s=5.0)
    stale = [k async for k in client.scan_iter(match=f"{PREFIX}:{{{setup.tenant_id}}}:*")]
    if stale:
        await client.delete(*stale)
    await client.aclose()


@pytest.mark.redis
async def test_usage_reads_spend_and_reservations_from_redis(
    setup: Setup, redis_tenant: str
) -> None:
    result = await setup.gateway("budgets", "set", TENANT, "--daily-usd", "10")
    assert result.exit_code == 0, result.output
    # Spend as a replica would: one request settled, one still holding its reservation.
    store = RedisBudgetStore.from_url(redis_tenant, timeout_s=5.0)
    scopes = (ScopeLimits("tenant", BudgetLimits(daily_micro_usd=10_000_000)),)
    day, month = periods(time.time())
    try:
        for cost in (1_250_000, 2_000_000):
            request = AdmitRequest(f"r-{uuid.uuid4().hex}", setup.tenant_id, scopes, cost, 300,
                                   day, month)
            admission = await store.admit(request)
            assert admission.reservation is not None
        await store.settle(admission.reservation, 500_000, 120)  # the second one settles
    finally:
        await store.close()

    result = await setup.gateway("usage", TENANT, "--json", GATEWAY_REDIS_URL=redis_tenant)
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["tenant"] == TENANT and report["day"] == day
    tenant = next(s for s in report["scopes"] if s["scope"] == "tenant")
    assert tenant["spent_today_usd"] == "0.500000" and tenant["tokens_today"] == 120
    assert tenant["reserved_usd"] == "1.250000" and tenant["in_flight"] == 1
    assert tenant["remaining"]["daily_usd"] == "8.250000"  # 10 - 0.5 spent - 1.25 held
    assert tenant["remaining"]["monthly_usd"] is None

    table = await setup.gateway("usage", TENANT, GATEWAY_REDIS_URL=redis_tenant)
    assert table.exit_code == 0, table.output
    row = next(line.split() for line in table.stdout.splitlines()
               if line.startswith("tenant "))
    assert row[:6] == ["tenant", "0.500000", "0.500000", "1.250000", "1", "8.250000"]


async def test_usage_without_redis_points_to_the_admin_api(setup: Setup) -> None:
    result = await setup.gateway("usage", TENANT)
    assert result.exit_code == 1
    assert f"/admin/tenants/{TENANT}/usage" in result.output
    assert "GATEWAY_REDIS_URL" in result.output


async def test_usage_with_redis_down_fails_cleanly_and_quickly(setup: Setup) -> None:
    started = time.monotonic()
    result = await setup.gateway("usage", TENANT,
                                 GATEWAY_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    assert result.exit_code == 1
    assert "did not answer" in result.output
    assert time.monotonic() - started < 10
