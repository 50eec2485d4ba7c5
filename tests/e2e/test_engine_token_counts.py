"""A backend whose policy says `tokens: {count: tokenize}` is asked for its own count (vLLM's
/tokenize, here the simulated engine's) when the estimate would turn a prompt away: the
same prompt that an estimate-only backend refuses as too long is served."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import openai
import pytest
from fastapi import FastAPI

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.provider_kinds.engine_tokens import EngineTokenCounter
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.types import Endpoint
from tests.e2e.conftest import FAST, create_key
from tests.support.servers import ServerThread, free_port, serve

# ~300 o200k tokens: at a 4x margin 1,200, over the 1,024-token window; the engine's own
# tokenizer counts far fewer.
PROMPT = "Summarise the quarterly report on warehouse throughput and staffing. " * 30


def policy_yaml(port: int, *, closed_port: int) -> str:
    backend = ("provider: vllm, model: sim-model, context_window: 1024, "
               "price_per_mtok_usd: {input: 1.0, output: 2.0}")
    return f"""\
version: 1
backends:
  - {{name: asks, base_url: 'http://127.0.0.1:{port}/v1', {backend},
     tokens: {{count: tokenize, ratio: 4}}}}
  - {{name: guesses, base_url: 'http://127.0.0.1:{port}/v1', {backend},
     tokens: {{count: estimate, ratio: 4}}}}
  - {{name: unreachable, base_url: 'http://127.0.0.1:{closed_port}/v1', {backend},
     tokens: {{count: tokenize, ratio: 4}}}}
models:
  asking: [asks]
  guessing: [guesses]
  broken: [unreachable]
"""


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[str, str, int]]:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    sim = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=1, **FAST))).start()
    settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool")
    try:
        policy = parse_policy(policy_yaml(sim.port, closed_port=free_port()))
        with serve(create_app(settings, policy=policy)) as gw:
            yield gw.url, key, sim.port
    finally:
        sim.stop()


def ask(url: str, key: str, model: str) -> openai.types.chat.ChatCompletion:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0) as client:
        return client.chat.completions.create(
            model=model, max_tokens=8, messages=[{"role": "user", "content": PROMPT}])


def test_the_engines_own_count_lets_a_prompt_the_estimate_refuses_through(
    gateway: tuple[str, str, int],
) -> None:
    url, key, _ = gateway
    with pytest.raises(openai.BadRequestError) as refused:
        ask(url, key, "guessing")
    assert refused.value.code == "context_length_exceeded"
    assert "context_window 1024 < prompt" in refused.value.message
    served = ask(url, key, "asking")
    assert served.usage is not None and served.usage.prompt_tokens < 1024 - 8


def test_an_engine_that_cannot_answer_leaves_the_estimate_in_force(
    gateway: tuple[str, str, int],
) -> None:
    url, key, _ = gateway
    with pytest.raises(openai.BadRequestError) as refused:
        ask(url, key, "broken")
    assert refused.value.code == "context_length_exceeded"


async def test_the_counter_reads_vllms_answer_and_shrugs_off_failures(
    gateway: tuple[str, str, int],
) -> None:
    _, _, port = gateway
    policy = parse_policy(policy_yaml(port, closed_port=free_port()))
    chat = {"messages": [{"role": "user", "content": PROMPT}]}
    no_route = ServerThread(FastAPI()).start()  # answers 404 to /tokenize
    try:
        async with httpx.AsyncClient() as client:
            counter = EngineTokenCounter(client, timeout_s=2.0)
            asks = policy.backends["asks"]
            count = await counter.count(asks, Endpoint.CHAT, chat, "req_1")
            direct = await client.post(f"http://127.0.0.1:{port}/tokenize",
                                       json={"model": "sim-model", **chat})
            assert count == direct.json()["count"]
            completion = await counter.count(asks, Endpoint.COMPLETIONS, {"prompt": PROMPT}, "r")
            assert isinstance(completion, int) and completion > 0
            assert await counter.count(asks, Endpoint.EMBEDDINGS, {"input": "x"}, "r") is None
            broken = policy.backends["unreachable"]
            assert await counter.count(broken, Endpoint.CHAT, chat, "req_2") is None
            missing = replace(asks, tokenize_url=f"http://127.0.0.1:{no_route.port}/tokenize")
            assert await counter.count(missing, Endpoint.CHAT, chat, "req_3") is None
    finally:
        no_route.stop()

