"""The accurate mode (GATEWAY_COMPLEXITY_ENCODER=minilm): the gateway scores complexity with
the full MiniLM in its worker pool, and routes on the same class the model gives offline,
with concurrent requests all answered."""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai

from gateway.app import create_app
from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.encoder_paths import MINILM_COMPLEXITY_PATH
from gateway.classify.full_encoder import FullEncoder
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, sim_backend
from tests.support.servers import serve

PROMPTS = ["Hi! How are you today?",
           "Prove that every bounded monotone sequence of real numbers converges.",
           "Write a haiku about autumn leaves.",
           "Design a Byzantine fault tolerant replicated log and argue its safety."]


def test_the_accurate_mode_routes_on_the_full_encoders_class(gw: Gateway,
                                                               tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "version: 1\nbackends:\n" + sim_backend(gw, "home", "sim-a", "self_hosted", 4096)
        + sim_backend(gw, "away", "sim-b", "external", 4096)
        + "models:\n  auto: [home, away]\nrules:\n"
        "  - name: sensitive-home\n    when: {sensitivity: [pii, phi, secret]}\n"
        "    allow_zones: [self_hosted]\n"
        "  - name: hard\n    when: {complexity: [high]}\n    prefer: [away]\n"
        "  - name: rest\n    prefer: [home]\n", encoding="utf-8")
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    settings = Settings(database_url=db_url, policy_path=policy, complexity_encoder="minilm",
                        complexity_encoder_workers=1)
    offline = EncoderComplexityModel.load(MINILM_COMPLEXITY_PATH, FullEncoder.load())
    expected = [offline.assess(p).label for p in PROMPTS]
    assert "high" in expected and expected != ["high"] * len(expected)

    async def ask_all(url: str) -> list[dict[str, str]]:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=key,
                                      max_retries=0) as client:
            async def one(text: str) -> dict[str, str]:
                raw = await client.chat.completions.with_raw_response.create(
                    model="auto", max_tokens=3, messages=[{"role": "user", "content": text}])
                raw.parse()
                return dict(raw.headers)

            return await asyncio.gather(*(one(p) for p in PROMPTS * 4))

    with serve(create_app(settings)) as server:
        replies = asyncio.run(ask_all(server.url))
    assert len(replies) == 4 * len(PROMPTS)  # concurrent requests, batched, all answered
    for i, headers in enumerate(replies):
        label = expected[i % len(PROMPTS)]
        assert headers["x-gateway-complexity"] == label
        assert headers["x-gateway-backend"] == ("away" if label == "high" else "home")
