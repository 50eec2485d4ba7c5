"""A stream that ends during shutdown still gets its audit row: the gateway under uvicorn is
stopped while a slow backend is mid-answer, uvicorn's graceful wait runs out and cancels the
stream, and settling it waits on Redis (paused, as a failover or a busy server would) past
the moment the rest of the app has closed. The lifespan drains the routing service's stream
ends before it stops the audit writer, so the row reaches Postgres."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest
import redis
from sqlalchemy import select

from gateway.app import create_app
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import create_key
from tests.support.databases import empty_postgres
from tests.support.servers import ServerThread

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

GRACE_S = 2  # tests/support/servers.py: uvicorn's timeout_graceful_shutdown
PAUSE_S = GRACE_S + 3  # Redis answers again well after the rest of the shutdown is done


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: slow\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 4096\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  auto: [slow]\n"
        # A budget: every request is reserved in Redis and settled there when it ends.
        "tenants:\n  acme:\n    budget: {daily_usd: 10}\n"
    )




def audit_row(db_url: str, request_id: str) -> dict[str, object] | None:
    async def main() -> dict[str, object] | None:
        engine = create_engine(db_url)
        try:
            async with engine.connect() as conn:
                found = (await conn.execute(
                    select(audit_log).where(audit_log.c.request_id == request_id))).first()
                return found._asdict() if found is not None else None
        finally:
            await engine.dispose()

    return asyncio.run(main())


@dataclass
class Rig:
    gateway: ServerThread
    key: str
    db_url: str
    redis_url: str


@pytest.fixture
def rig(postgres_url: str, redis_url: str, tmp_path: Path) -> Iterator[Rig]:
    empty_postgres(postgres_url)
    redis.Redis.from_url(redis_url).flushdb()
    key = create_key(postgres_url, "acme")
    # 50 ms a token and 400 tokens: the answer would take 20 s, so it is mid-stream when the
    # gateway is told to stop.
    sim = ServerThread(create_sim_app(SimConfig(
        model_name="sim-model", seed=5, decode_step_base_s=0.05,
        output_tokens_min=400, output_tokens_max=400))).start()
    settings = Settings(
        database_url=postgres_url, redis_url=redis_url,
        redis_timeout_s=PAUSE_S + 5,  # settling waits the pause out instead of failing
        budget_lease_s=0,  # each settle is its own Redis call, not a local lease update
        audit_spool_dir=tmp_path / "spool",
    )
    gateway = ServerThread(create_app(settings, policy=parse_policy(policy_yaml(sim.port))))
    try:
        yield Rig(gateway.start(), key, postgres_url, redis_url)
    finally:
        gateway.stop()  # a no-op when the test stopped it already
        sim.stop()
        redis.Redis.from_url(redis_url).execute_command("CLIENT", "UNPAUSE")


def test_a_stream_cut_by_shutdown_is_settled_and_recorded(rig: Rig) -> None:
    client = openai.OpenAI(base_url=f"{rig.gateway.url}/v1", api_key=rig.key, max_retries=0,
                           timeout=30)
    with client, client.chat.completions.with_streaming_response.create(
        model="auto", messages=[{"role": "user", "content": "Tell me a long story."}],
        stream=True,
    ) as response:
        request_id = response.headers["x-request-id"]
        chunks = response.iter_lines()
        assert any(line.startswith("data: {") for line in (next(chunks) for _ in range(3)))
        # Writes (the settle script among them) wait until the pause ends; reads do not.
        redis.Redis.from_url(rig.redis_url).execute_command(
            "CLIENT", "PAUSE", PAUSE_S * 1000, "WRITE")
        paused_at = time.monotonic()
        rig.gateway.stop()  # graceful wait, then uvicorn cancels the stream; then the lifespan
        stopped_after_s = time.monotonic() - paused_at
        assert not rig.gateway.thread.is_alive(), "the gateway did not finish shutting down"

    row = audit_row(rig.db_url, request_id)
    assert row is not None, "the stream's audit row was lost at shutdown"
    # It got there because the shutdown waited for the settle Redis held back.
    assert stopped_after_s >= PAUSE_S - 0.5
    assert row["stream"] is True and row["backend"] == "slow"
    assert row["outcome"] == "client_disconnected" and row["unmetered"] is False
    assert 0 < int(row["completion_tokens"]) < 400  # type: ignore[call-overload]
