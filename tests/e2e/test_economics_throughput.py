"""Throughput in the economics report is physically plausible: a simulated vLLM that decodes
one token per 20 ms step (at most 50 tokens/s per stream) serves streamed and whole replies
through a real gateway. The report agrees within 10 % with the decode speed the client itself
saw on the streams, and never exceeds what the engine can do, however many tokens the whole
replies (which measure no decode time) added. (On a loaded machine the simulator's steps run
late, so the speed both sides see can be below 50; the bound holds either way.)"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import openai

from gateway.app import create_app
from gateway.db.engine import create_engine
from gateway.deployments.repository import DeclaredGpus
from gateway.policy.loader import parse_policy
from gateway.reports.build import Scope, economics_report
from gateway.reports.periods import parse_period
from gateway.reports.render import ReportTable
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import ADMIN_KEY, create_key
from tests.support.servers import ServerThread, serve

DECODE_STEP_S = 0.020  # one token per step, one sequence at a time: 50 tokens/s
STREAMED, WHOLE, TOKENS = 4, 2, 100


def economics(db_url: str) -> dict[str, object]:
    async def read() -> ReportTable:
        engine = create_engine(db_url)
        try:
            now = datetime.now(UTC)
            return await economics_report(engine, parse_period("today", None, now),
                                          Scope(None, None, now),
                                          [DeclaredGpus("l4", 800_000, 1)], {})
        finally:
            await engine.dispose()

    table = asyncio.run(read())
    names = [c.name for c in table.columns]
    rows = {r[0]: dict(zip(names, r, strict=True)) for r in table.rows}
    return rows.get("l4", {"requests": 0})


def test_decode_speed_of_a_simulated_backend(tmp_path: Path) -> None:
    sim = ServerThread(create_sim_app(SimConfig(
        model_name="sim-model", decode_step_base_s=DECODE_STEP_S, decode_step_per_seq_s=0.0,
        prefill_tokens_per_s=10**6, output_tokens_min=TOKENS, output_tokens_max=TOKENS,
        max_model_len=2048)))
    sim.start()
    try:
        db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
        key = create_key(db_url, "acme")
        policy = parse_policy(
            "version: 1\nbackends:\n  - name: l4\n    provider: vllm\n"
            f"    base_url: http://127.0.0.1:{sim.port}/v1\n    model: sim-model\n"
            "    context_window: 2048\n    gpu: {type: L4, hourly_usd: 0.8, count: 1}\n"
            "models:\n  auto: [l4]\n")
        settings = Settings(database_url=db_url, admin_key=ADMIN_KEY)
        with serve(create_app(settings, policy=policy)) as server, openai.OpenAI(
                base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
            messages = [{"role": "user", "content": "Count slowly."}]
            seen_s = 0.0  # from each stream's first content chunk to its last, at the client
            for _ in range(STREAMED):
                stream = client.chat.completions.create(
                    model="auto", messages=messages, stream=True,  # type: ignore[arg-type]
                    stream_options={"include_usage": True})
                first = last = None
                for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        last = time.monotonic()
                        first = first or last
                assert first is not None and last is not None
                seen_s += last - first
            for _ in range(WHOLE):
                client.chat.completions.create(model="auto", messages=messages)  # type: ignore[arg-type]
            deadline = time.monotonic() + 20
            found = economics(db_url)
            while found["requests"] != STREAMED + WHOLE:
                assert time.monotonic() < deadline, found
                time.sleep(0.2)
                found = economics(db_url)
    finally:
        sim.stop()
    assert found["completion_tokens"] == (STREAMED + WHOLE) * TOKENS
    speed = found["decode_tokens_per_s"]
    assert isinstance(speed, float)
    seen = STREAMED * (TOKENS - 1) / seen_s
    assert abs(speed - seen) <= 0.1 * seen, (speed, seen)
    assert speed <= 1.1 / DECODE_STEP_S, speed  # counting every reply's tokens gave ~1.5×
