"""Telemetry-aware routing end to end: a gateway scraping two simulated vLLM servers of
different KV sizes, with an external API (a third sim in the external zone) to spill to.

Every decision here is driven by what the gateway read from the sims' /metrics and what it
sent since: KV admission, saturation and spill-over, recovery, sensitive data staying home,
the fleet view and its Prometheus gauges.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import ADMIN_KEY, create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import ServerThread, serve

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
BLOCK = 16
SLOW = {"decode_step_base_s": 0.005, "output_tokens_min": 400, "output_tokens_max": 400}


@dataclass
class Rig:
    url: str
    key: str
    sims: dict[str, ServerThread]
    audit_path: Path

    def client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=f"{self.url}/v1", api_key=self.key, max_retries=0)

    def fleet(self) -> dict[str, dict[str, object]]:
        resp = httpx.get(f"{self.url}/admin/fleet", headers=ADMIN, timeout=10)
        resp.raise_for_status()
        return resp.json()["backends"]  # type: ignore[no-any-return]

    def wait_for(self, check: object, timeout_s: float = 10.0) -> dict[str, dict[str, object]]:
        deadline = time.monotonic() + timeout_s
        while True:
            fleet = self.fleet()
            if check(fleet):  # type: ignore[operator]
                return fleet
            if time.monotonic() > deadline:
                raise AssertionError(f"fleet never reached the expected state: {fleet}")
            time.sleep(0.05)


def policy_text(ports: dict[str, int]) -> str:
    def vllm(name: str, port: int) -> str:
        return (f"  - {{name: {name}, provider: vllm, base_url: 'http://127.0.0.1:{port}/v1',"
                f" model: sim, context_window: 4096, max_num_seqs: 2,"
                f" gpu: {{type: L4, hourly_usd: 0.8}}}}\n")

    return (
        "version: 1\nbackends:\n"
        + vllm("big", ports["big"]) + vllm("small", ports["small"])
        + f"  - {{name: api, provider: openai_compat, base_url: 'http://127.0.0.1:"
        f"{ports['api']}/v1', model: sim, zone: external, context_window: 8192,"
        " price_per_mtok_usd: {input: 3, output: 15}}\n"
        "models:\n  auto: [big, small]\n"
        "rules:\n"
        "  - {name: private, when: {sensitivity: [pii, secret, phi]},"
        " allow_zones: [self_hosted], spill_to: [api]}\n"
        "  - {name: overflow, spill_to: [api]}\n"
        "telemetry: {scrape_interval_s: 0.2, stale_after_s: 2, max_waiting: 0}\n"
    )


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("telemetry")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    configs = {
        "big": SimConfig(model_name="sim", block_size=BLOCK, num_gpu_blocks=1024,
                         max_num_seqs=2, max_model_len=4096, seed=1, **SLOW),
        "small": SimConfig(model_name="sim", block_size=BLOCK, num_gpu_blocks=64,
                           max_num_seqs=2, max_model_len=1024, seed=2, **SLOW),
        "api": SimConfig(model_name="sim", seed=3, time_scale=0.05),
    }
    sims = {name: ServerThread(create_sim_app(cfg)).start() for name, cfg in configs.items()}
    settings = Settings(database_url=db_url, admin_key=ADMIN_KEY,
                        audit_log_path=str(tmp / "audit.jsonl"), upstream_read_timeout_s=30)
    policy = parse_policy(policy_text({n: s.port for n, s in sims.items()}))
    try:
        with serve(create_app(settings, policy=policy)) as server:
            rig = Rig(server.url, key, sims, tmp / "audit.jsonl")
            rig.wait_for(lambda f: all(f[n]["kv_capacity_tokens"] for n in ("big", "small")))
            yield rig
    finally:
        for sim in sims.values():
            sim.stop()


def idle(fleet: dict[str, dict[str, object]]) -> bool:
    return all(fleet[n]["running"] == 0 and fleet[n]["waiting"] == 0 and
               fleet[n]["in_flight"] == 0 for n in ("big", "small"))


async def ask(rig: Rig, content: str, max_tokens: int = 8) -> str:
    async with rig.client() as client:
        raw = await client.chat.completions.with_raw_response.create(
            model="auto", messages=[{"role": "user", "content": content}],
            max_tokens=max_tokens)
    return raw.headers["x-gateway-backend"]


def test_the_fleet_view_and_gauges_show_what_was_scraped(rig: Rig) -> None:
    fleet = rig.wait_for(idle)
    assert fleet["big"]["kv_capacity_tokens"] == 1024 * BLOCK
    assert fleet["small"]["kv_capacity_tokens"] == 64 * BLOCK
    assert fleet["big"]["engine"] == "vllm" and fleet["big"]["circuit"] == "closed"
    assert 0 <= fleet["big"]["scrape_age_s"] < 2  # type: ignore[operator]
    assert fleet["api"]["engine"] is None  # an API has no engine metrics, only measurements
    text = httpx.get(f"{rig.url}/metrics", headers=ADMIN).text
    assert f'gateway_backend_kv_capacity_tokens{{backend="small"}} {64 * BLOCK}.0' in text
    assert 'gateway_backend_circuit_state{backend="big",state="closed"} 1.0' in text


def test_a_request_that_does_not_fit_the_small_kv_cache_goes_to_the_big_one(rig: Rig) -> None:
    rig.wait_for(idle)

    async def main() -> set[str]:
        # 1,200 tokens of KV (prompt + max_tokens) cannot fit in 1,024: never "small".
        return {await ask(rig, f"question {i} " + "word " * 200, max_tokens=1000)
                for i in range(3)}

    assert asyncio.run(main()) == {"big"}
    explained = httpx.post(f"{rig.url}/admin/policy/explain", headers=ADMIN, json={
        "tenant": "acme",
        "request": {"model": "auto", "max_tokens": 1000,
                    "messages": [{"role": "user", "content": "word " * 200}]},
    }).json()
    reasons = {r["backend"]: r["reason"] for r in explained["rejected"]}
    assert "KV cache" in reasons["small"]


def test_a_saturated_pool_spills_to_the_api_then_traffic_returns_home(rig: Rig) -> None:
    rig.wait_for(idle)

    async def main() -> None:
        async with rig.client() as client:
            await saturate_and_spill(client)

    async def saturate_and_spill(client: openai.AsyncOpenAI) -> None:
        # Four 400-token streams fill both engines' two batch slots.
        streams = [
            await client.chat.completions.create(
                model="auto", stream=True, max_tokens=400,
                messages=[{"role": "user", "content": f"long story {i}"}])
            for i in range(4)
        ]
        raw = await client.chat.completions.with_raw_response.create(
            model="auto", max_tokens=4, messages=[{"role": "user", "content": "quick one"}])
        assert raw.headers["x-gateway-backend"] == "api"
        assert raw.headers["x-gateway-spill-over"] == "true"
        assert raw.headers["x-gateway-rule"] == "overflow"
        # Sensitive data never leaves, however full the pool is.
        private = await client.chat.completions.with_raw_response.create(
            model="auto", max_tokens=4,
            messages=[{"role": "user", "content": "email me at jane.doe@globex-mail.com"}])
        assert private.headers["x-gateway-backend"] in {"big", "small"}
        assert "x-gateway-spill-over" not in private.headers
        for stream in streams:
            await stream.close()

    asyncio.run(main())
    rig.wait_for(idle)

    async def after() -> set[str]:
        return {await ask(rig, f"back home {i}") for i in range(4)}

    assert asyncio.run(after()) <= {"big", "small"}
    rows = mirror_rows(rig.audit_path)
    spilled = [r for r in rows if r["spill_over"]]
    assert spilled and all(r["backend"] == "api" for r in spilled)
    assert all(r["predicted_ttft_s"] > 0 and r["rule"] == "overflow" for r in spilled)
    # The trace says why the pool was passed over.
    assert any("wait behind" in r["reason"] for r in spilled[0]["rejected"])


def test_measured_latency_and_in_flight_counts_come_back_to_zero(rig: Rig) -> None:
    async def main() -> None:
        async with rig.client() as client:
            stream = await client.chat.completions.create(
                model="auto", stream=True, max_tokens=5,
                messages=[{"role": "user", "content": "measure me"}])
            async for _ in stream:
                pass

    asyncio.run(main())
    fleet = rig.wait_for(idle)
    measured = [fleet[n]["ttft_s"] for n in ("big", "small") if fleet[n]["ttft_s"]]
    assert measured and all(0 < t < 5 for t in measured)  # type: ignore[operator]
    assert all(fleet[n]["kv_reserved_tokens"] == 0 for n in fleet)


def test_only_a_shared_prefix_counts_as_cached_where_it_was_sent(rig: Rig) -> None:
    """Lone messages (every request above) share nothing: no backend holds a warm prefix.
    A session's requests make their key warm on the replica that served them, which is what
    lets its later KV claims there discount the cached prefix."""
    assert all(view["warm_prefixes"] == 0 for view in rig.fleet().values())

    async def main() -> set[str]:
        served = set()
        async with rig.client() as client:
            for i in range(2):
                raw = await client.chat.completions.with_raw_response.create(
                    model="auto", max_tokens=4, extra_headers={"x-session-id": "e2e-chat"},
                    messages=[{"role": "user", "content": f"turn {i} of one conversation"}])
                served.add(raw.headers["x-gateway-backend"])
        return served

    served = asyncio.run(main())
    fleet = rig.wait_for(idle)
    assert all(fleet[name]["warm_prefixes"] == 1 for name in served)
    assert all(fleet[name]["warm_prefixes"] == 0 for name in fleet if name not in served)
