"""Values a client controls that the database would refuse (NUL characters, a model name longer
than its column, token counts past any integer column) reach the audit log as rows, through
a real gateway on Postgres (and SQLite) driven by the official openai SDK: nothing is refused,
nothing quarantined, and every stored row still verifies."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from sqlalchemy import select

from gateway.app import create_app
from gateway.audit.chain_repository import verify_range
from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.support.databases import empty_postgres
from tests.support.servers import ServerThread, serve

METRICS_KEY = "hostile-metrics-key"
NUL = "\x00"
HUGE = 2**64 - 1  # the largest integer a JSON body can carry to us as an integer
LONG_MODEL = "sim-" + NUL + "x" * 300
TAGS = ",".join(f"team-{i:04d}" for i in range(120))  # ~1300 characters, the column has 400


@dataclass
class Rig:
    url: str
    key: str
    db_url: str


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 4096\n    quality_tier: 2\n"
        "    price_per_mtok_usd: {input: 1.0, output: 2.0}\n"
        "models:\n  auto: [sim]\n"
    )




@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    db_url = (f"sqlite+aiosqlite:///{tmp_path}/gw.db" if request.param == "sqlite"
              else empty_postgres(request.getfixturevalue("postgres_url")))
    key = create_key(db_url, "acme")
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=9, **FAST))).start()
    settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool",
                        metrics_key=METRICS_KEY)
    try:
        with serve(create_app(settings, policy=parse_policy(policy_yaml(sim.port)))) as gw:
            yield Rig(gw.url, key, db_url)
    finally:
        sim.stop()


def metric(url: str, name: str) -> float:
    body = httpx.get(f"{url}/metrics", timeout=10,
                     headers={"authorization": f"Bearer {METRICS_KEY}"}).text
    found = re.search(rf"^{name} (\S+)$", body, re.M)
    assert found, name
    return float(found.group(1))


def audit_rows(db_url: str, request_ids: list[str]) -> dict[str, dict[str, object]]:
    async def main() -> dict[str, dict[str, object]]:
        engine = create_engine(db_url)
        try:
            async with engine.connect() as conn:
                found = await conn.execute(
                    select(audit_log).where(audit_log.c.request_id.in_(request_ids)))
                return {r.request_id: r._asdict() for r in found}
        finally:
            await engine.dispose()

    return asyncio.run(main())


def verified(db_url: str) -> bool:
    async def main() -> bool:
        engine = create_engine(db_url)
        try:
            return (await verify_range(engine, None, None)).ok
        finally:
            await engine.dispose()

    return asyncio.run(main())


def test_hostile_values_from_the_sdk_are_stored_not_refused(rig: Rig) -> None:
    request_ids: list[str] = []
    with openai.OpenAI(base_url=f"{rig.url}/v1", api_key=rig.key, max_retries=0,
                       default_headers={"x-gateway-tags": TAGS}) as client:
        answered = client.chat.completions.with_raw_response.create(
            model="auto", max_tokens=8, user="mallory" + NUL,
            metadata={"note": "a" + NUL + "b"},
            messages=[{"role": "user", "content": "hello" + NUL + "there"}])
        answered.parse()
        request_ids.append(answered.headers["x-request-id"])
        for model, max_tokens in ((LONG_MODEL, 8), ("auto", HUGE)):
            with pytest.raises(openai.APIStatusError) as refused:
                client.chat.completions.create(
                    model=model, max_tokens=max_tokens, user=NUL,
                    metadata={NUL: str(HUGE)}, messages=[{"role": "user", "content": "hi"}])
            assert refused.value.status_code < 500, refused.value
            request_ids.append(refused.value.response.headers["x-request-id"])

    deadline = time.monotonic() + 30
    rows = audit_rows(rig.db_url, request_ids)
    while len(rows) < len(request_ids):
        assert time.monotonic() < deadline, f"audit rows stored: {sorted(rows)}"
        time.sleep(0.1)
        rows = audit_rows(rig.db_url, request_ids)
    ok, long_model, huge = (rows[r] for r in request_ids)
    assert ok["status"] == 200 and ok["requested_model"] == "auto"
    assert ok["tags"] == TAGS[:400]
    assert long_model["requested_model"] == ("sim-\ufffd" + "x" * 300)[:128]
    assert huge["max_output_tokens"] == 2**31 - 1  # the column's largest value
    assert metric(rig.url, "gateway_audit_rows_quarantined_total") == 0
    assert metric(rig.url, "gateway_audit_write_failures_total") == 0
    assert verified(rig.db_url)
