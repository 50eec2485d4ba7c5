"""Calibrated TTFT prediction and SLO rules end to end: a gateway in front of one simulated
vLLM engine (prefill at 4,000 tokens/s) and a simulated commercial API 200 ms away.

The gateway learns the engine's TTFT from its own measurements, then predicts it within a
factor of 1.5 (the policy's prior alone is several times off here); an SLO rule sends a
prompt that cannot be prefilled within its target to the API, keeps a short one home, and
when no backend can meet the target the audit row says so and why.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import orjson
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.scraper.ttft_learning import MIN_SAMPLES
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import ADMIN_KEY, create_key
from tests.support.servers import ServerThread, serve

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey").split()


@dataclass
class Rig:
    url: str
    key: str
    audit_path: Path

    def fleet(self) -> dict[str, dict[str, object]]:
        resp = httpx.get(f"{self.url}/admin/fleet", headers=ADMIN, timeout=10)
        resp.raise_for_status()
        return resp.json()["backends"]  # type: ignore[no-any-return]

    def audit(self, count: int, timeout_s: float = 10.0) -> list[dict[str, object]]:
        """The audit rows once at least `count` were written (the writer batches)."""
        deadline = time.monotonic() + timeout_s
        while True:
            rows = []
            if self.audit_path.exists():
                rows = [orjson.loads(line) for line in
                        self.audit_path.read_bytes().splitlines() if line.strip()]
            if len(rows) >= count or time.monotonic() > deadline:
                return rows
            time.sleep(0.1)


POLICY = """\
version: 1
backends:
  - {{name: home, provider: vllm, base_url: 'http://127.0.0.1:{home}/v1', model: sim,
     context_window: 8192, max_num_seqs: 4, gpu: {{type: L4, hourly_usd: 0.8}}}}
  - {{name: api, provider: openai_compat, base_url: 'http://127.0.0.1:{api}/v1', model: sim,
     zone: external, context_window: 8192, price_per_mtok_usd: {{input: 3, output: 15}},
     latency: {{ttft_ms: 300, tpot_ms: 20}}}}
models:
  auto: [home]
rules:
  - {{name: private, when: {{sensitivity: [pii, secret, phi]}}, allow_zones: [self_hosted]}}
  - {{name: strict, when: {{tags: [strict]}}, slo: {{ttft_ms: 30}}, spill_to: [api]}}
  - {{name: plain, when: {{tags: [plain]}}}}
  - {{name: interactive, slo: {{ttft_ms: 400}}, spill_to: [api]}}
telemetry: {{scrape_interval_s: 0.2, stale_after_s: 3}}
"""


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("calibration")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    sims = {
        "home": ServerThread(create_sim_app(SimConfig(
            model_name="sim", max_num_seqs=4, max_model_len=8192, prefill_tokens_per_s=4000.0,
            decode_step_base_s=0.005, output_tokens_min=4, output_tokens_max=6, seed=1,
        ))).start(),
        "api": ServerThread(create_sim_app(SimConfig(
            model_name="sim", api="openai", response_delay_s=0.2, output_tokens_min=4,
            output_tokens_max=6, seed=2,
        ))).start(),
    }
    settings = Settings(database_url=db_url, admin_key=ADMIN_KEY,
                        audit_log_path=str(tmp / "audit.jsonl"), upstream_read_timeout_s=30)
    policy = parse_policy(POLICY.format(home=sims["home"].port, api=sims["api"].port))
    try:
        with serve(create_app(settings, policy=policy)) as server:
            yield Rig(server.url, key, tmp / "audit.jsonl")
    finally:
        for sim in sims.values():
            sim.stop()


def prompt(rng: random.Random, words: int) -> str:
    # Distinct from the first word on, so no request reuses another's prefix cache.
    return f"{rng.random()} " + " ".join(rng.choice(WORDS) for _ in range(words))


async def ask(rig: Rig, content: str, tags: str | None = None) -> str:
    headers = {"x-gateway-tags": tags} if tags else {}
    async with openai.AsyncOpenAI(base_url=f"{rig.url}/v1", api_key=rig.key,
                                  max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="auto", messages=[{"role": "user", "content": content}], max_tokens=8,
            stream=True, extra_headers=headers)
        backend = ""
        async for _ in stream:
            backend = stream.response.headers["x-gateway-backend"]
    return backend


def test_learned_ttft_tracks_the_engine_and_slo_rules_keep_or_explain_their_promise(
    rig: Rig,
) -> None:
    rng = random.Random(5)

    async def calibrate() -> None:
        # Two at a time, 100–2,000 words: the model sees both prefill length and a queue.
        sizes = [rng.randint(100, 2000) for _ in range(MIN_SAMPLES + 6)]
        for i in range(0, len(sizes), 2):
            await asyncio.gather(*(ask(rig, prompt(rng, n), "plain") for n in sizes[i:i + 2]))

    asyncio.run(calibrate())
    prediction = rig.fleet()["home"]["ttft_prediction"]
    assert isinstance(prediction, dict) and prediction["source"] == "learned", prediction
    assert prediction["model"]["per_1k_prefill_tokens_s"] > 0  # type: ignore[index]
    calibrated = len(rig.audit(MIN_SAMPLES + 6))

    async def measured() -> list[str]:
        return [await ask(rig, prompt(rng, rng.randint(100, 1200)), "plain") for _ in range(10)]

    assert set(asyncio.run(measured())) == {"home"}
    rows = rig.audit(calibrated + 10)[calibrated:]
    ratios = sorted(float(r["predicted_ttft_s"]) / float(r["ttft_s"])  # type: ignore[arg-type]
                    for r in rows)
    assert len(ratios) == 10 and 0.67 < ratios[5] < 1.5, ratios
    # The audit record keeps the prediction's inputs beside the chosen backend's load.
    note = rows[-1]["telemetry"]["prediction"]  # type: ignore[index]
    assert note["source"] == "learned" and note["samples"] >= MIN_SAMPLES
    assert note["prefill_tokens_ahead"] > 100

    # Under the default rule (slo 400 ms), a 3,500-word prompt needs ~0.9 s of prefill: over
    # the target, so it goes to the API (~0.2 s); a short one stays home.
    assert asyncio.run(ask(rig, prompt(rng, 3500))) == "api"
    assert asyncio.run(ask(rig, prompt(rng, 40))) == "home"
    # Nothing meets 30 ms: the request goes where it is predicted fastest and the audit row
    # says that the promise could not be kept, and why for each backend.
    asyncio.run(ask(rig, prompt(rng, 1500), tags="strict"))
    last = rig.audit(calibrated + 13)[-1]
    assert last["rule"] == "strict"
    miss = last["slo_miss"]
    assert miss.startswith("no candidate predicted within 30 ms")
    assert "home: predicted TTFT" in miss and "api: predicted TTFT" in miss
