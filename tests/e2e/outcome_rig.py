"""A gateway with quality-marking simulated backends, a simulated judge and shadow judging
declared in its policy: the rig for the feedback and shadow-judging tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
from sqlalchemy import select

from gateway.app import create_app
from gateway.components import Components
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.db.outcome_tables import request_outcomes
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.tenancy.repository import TenantRepository
from tests.e2e.conftest import ADMIN_KEY, FAST
from tests.support.databases import clear_schema
from tests.support.sdk_clients import OpenedClients
from tests.support.servers import ServerThread, serve

WEAK_TIER, STRONG_TIER = 2, 4


@dataclass
class Rig:
    url: str
    keys: dict[str, str]  # tenant → key
    db_url: str
    sims: dict[str, ServerThread]  # "weak", "strong" (which also judges)
    parts: Components
    opened: OpenedClients = field(default_factory=OpenedClients)

    def client(self, tenant: str = "acme") -> openai.OpenAI:
        return self.opened.track(openai.OpenAI(
            base_url=f"{self.url}/v1", api_key=self.keys[tenant], max_retries=0, timeout=15))

    def ask(self, prompt: str, tenant: str = "acme", model: str = "auto") -> tuple[str, str, str]:
        """(request id, backend, answer) of one chat completion through the openai SDK."""
        raw = self.client(tenant).chat.completions.with_raw_response.create(
            model=model, messages=[{"role": "user", "content": prompt}], max_tokens=40)
        answer = raw.parse().choices[0].message.content or ""
        return raw.headers["x-request-id"], raw.headers["x-gateway-backend"], answer

    def feedback(self, body: dict[str, Any], tenant: str = "acme") -> dict[str, Any]:
        """POST /v1/feedback through the openai SDK (errors raise its typed exceptions)."""
        reply = self.client(tenant).post("/feedback", cast_to=httpx.Response, body=body)
        return reply.json()  # type: ignore[no-any-return]

    def outcomes(self, request_id: str | None = None) -> list[dict[str, Any]]:
        async def read() -> list[dict[str, Any]]:
            engine = create_engine(self.db_url)
            try:
                query = select(request_outcomes).order_by(request_outcomes.c.ts)
                if request_id is not None:
                    query = query.where(request_outcomes.c.request_id == request_id)
                async with engine.connect() as conn:
                    return [dict(r._mapping) for r in await conn.execute(query)]
            finally:
                await engine.dispose()

        return asyncio.run(read())

    def sim_bodies(self, sim: str) -> list[tuple[str, dict[str, Any]]]:
        """(x-request-id, body) of every request a sim received."""
        entries = httpx.get(self.sims[sim].url + "/sim/requests", timeout=10).json()["data"]
        return [({k.lower(): v for k, v in e["headers"].items()}.get("x-request-id", ""),
                 e["body"]) for e in entries]

    def wait_for(self, what: Callable[[], bool], timeout_s: float = 20) -> None:
        deadline = time.monotonic() + timeout_s
        while not what():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.05)

    def shadow_numbers(self) -> dict[str, int]:
        assert self.parts.shadow is not None
        return self.parts.shadow.numbers()


def rig_policy(sims: dict[str, ServerThread], shadow: str) -> str:
    def backend(name: str, zone: str, tier: int, price: str) -> str:
        return (f"  - name: {name}\n    provider: vllm\n    base_url: "
                f"http://127.0.0.1:{sims[name].port}/v1\n    model: sim-model\n"
                f"    zone: {zone}\n    context_window: 1024\n    quality_tier: {tier}\n"
                f"    price_per_mtok_usd: {price}\n")

    return (
        "version: 1\nbackends:\n"
        + backend("weak", "self_hosted", WEAK_TIER, "{input: 0.1, output: 0.2}")
        + backend("strong", "external", STRONG_TIER, "{input: 2.5, output: 10.0}")
        + "models:\n  auto: [weak]\n  frontier: [strong]\n"
        "rules:\n"
        "  - name: sensitive-home\n    when: {sensitivity: [pii, phi, secret]}\n"
        "    allow_zones: [self_hosted]\n"
        "tenants:\n  acme: {store_content: full}\n  globex: {}\n"
        f"shadow: {shadow}\n"
    )


async def _prepare(db_url: str, tenants: list[str]) -> dict[str, str]:
    engine = create_engine(db_url)
    try:
        if engine.dialect.name == "postgresql":  # a clean schema for each rig
            await clear_schema(engine)
        await upgrade(engine)
        repo = TenantRepository(engine)
        keys = {}
        for tenant in tenants:
            keys[tenant], _ = await repo.create_key(await repo.ensure_tenant(tenant))
        return keys
    finally:
        await engine.dispose()


@contextmanager
def replica_of(rig: Rig, tmp: Path) -> Iterator[Rig]:
    """A second gateway on the same database and backends: it never saw the first one's
    requests, so it finds them in the database only."""
    settings = Settings(database_url=rig.db_url, admin_key=ADMIN_KEY, audit_spool_dir=tmp,
                        upstream_read_timeout_s=5.0)
    app = create_app(settings, policy=rig.parts.policy.current)
    with serve(app) as server:
        other = Rig(server.url, rig.keys, rig.db_url, rig.sims, app.state.components)
        try:
            yield other
        finally:
            other.opened.close()


@contextmanager
def outcome_rig(db_url: str, tmp: Path, shadow: str) -> Iterator[Rig]:
    keys = asyncio.run(_prepare(db_url, ["acme", "globex"]))
    sims = {
        "weak": ServerThread(create_sim_app(SimConfig(
            model_name="sim-model", seed=1, quality_tier=WEAK_TIER, **FAST))),
        "strong": ServerThread(create_sim_app(SimConfig(
            model_name="sim-model", seed=2, quality_tier=STRONG_TIER, judge=True, **FAST))),
    }
    for sim in sims.values():
        sim.start()
    settings = Settings(database_url=db_url, admin_key=ADMIN_KEY, audit_spool_dir=tmp / "spool",
                        upstream_read_timeout_s=5.0)
    app = create_app(settings, policy=parse_policy(rig_policy(sims, shadow)))
    try:
        with serve(app) as server:
            rig = Rig(server.url, keys, db_url, sims, app.state.components)
            try:
                yield rig
            finally:
                rig.opened.close()
    finally:
        for sim in sims.values():
            sim.stop()
