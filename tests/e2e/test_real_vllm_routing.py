"""Telemetry-aware routing over two real `vllm serve` engines with different KV caches.

The big engine has 32 MiB of KV (32,768 tokens) and 8 batch slots, the small one 4 MiB (4,096
tokens) and 4 slots (scripts/test.sh). Eleven concurrent long requests (~1,200 tokens of KV
each) fit the two together. A load-blind round-robin pool sends five of them to the small
engine, which has the KV for only three of its five: they are preempted or queue. The
load-aware pool, reading the engines' real `vllm:` metrics and counting its own sends, keeps
the small engine out of its waiting queue and out of preemption: it holds KV for each reply's
measured length (the engines' per-request histogram says 1,000 tokens). The assertions are on
the engines' own counters, not on how many requests went where: when a request arrives late
under load, a slot may rightly have freed up.
"""

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

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import ADMIN_KEY, create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import serve

pytestmark = pytest.mark.vllm
CONCURRENT = 11  # 8 slots on the big engine + 3 requests of KV on the small one
PROMPT = "tell me a long story about the sea " * 20  # ~200 tokens for the tiny model


@dataclass
class Engine:
    """One engine's cumulative counters, read before a burst: deltas over a burst come from
    the engine itself and cannot miss a moment, as sampling its waiting gauge could (and a
    sampling thread in this process would take the interpreter from the gateway under test)."""

    base_url: str  # .../v1
    preemptions_before: float = 0.0
    queue_s_before: float = 0.0
    queued_long_before: float = 0.0

    @property
    def metrics_url(self) -> str:
        return self.base_url.removesuffix("/v1") + "/metrics"

    def read(self, name: str, labels: str = "") -> float:
        text = httpx.get(self.metrics_url, timeout=30).text
        pattern = rf"^{name}{{[^}}]*{re.escape(labels)}[^}}]*}} (\S+)$"
        return sum(float(m) for m in re.findall(pattern, text, re.M))

    def queued_long(self) -> float:
        """Requests that waited over 0.3 s for a batch slot or KV blocks (the histogram's
        smallest bucket): behind 1,000-token generations, a wait is seconds, never this."""
        return (self.read("vllm:request_queue_time_seconds_count")
                - self.read("vllm:request_queue_time_seconds_bucket", 'le="0.3"'))

    def mark(self) -> None:
        self.preemptions_before = self.read("vllm:num_preemptions_total")
        self.queue_s_before = self.read("vllm:request_queue_time_seconds_sum")
        self.queued_long_before = self.queued_long()


@pytest.fixture  # a fresh gateway: its round robin starts at zero
def gateway_url(vllm_url: str, vllm_small_url: str,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    tmp: Path = tmp_path_factory.mktemp("vllm-routing")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    policy = parse_policy(
        "version: 1\nbackends:\n"
        f"  - {{name: big, provider: vllm, base_url: '{vllm_url}', model: tiny,"
        " context_window: 2048, max_num_seqs: 8}\n"
        f"  - {{name: small, provider: vllm, base_url: '{vllm_small_url}', model: tiny,"
        " context_window: 2048, max_num_seqs: 4}\n"
        "models:\n"
        "  aware: {backends: [big, small], strategy: load_aware}\n"
        "  blind: {backends: [big, small], strategy: round_robin}\n"
        # CPU vLLM under load can take a while to answer /metrics: be patient with it.
        "telemetry: {scrape_interval_s: 0.25, scrape_timeout_s: 5, stale_after_s: 30,"
        " affinity: {enabled: false}}\n"
    )
    # Two CPU engines spinning on two cores can starve this process for seconds: a connect
    # that the kernel completed at once may be seen late, and 5 s would fail it over.
    settings = Settings(database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"),
                        admin_key=ADMIN_KEY, upstream_connect_timeout_s=30.0)
    with serve(create_app(settings, policy=policy)) as server:
        yield server.url, key, tmp / "audit.jsonl"


def attempts(gateway: tuple[str, str, Path], model: str) -> list[tuple[list[str], list[str]]]:
    """The backends each request of a burst tried, and why any failed, from the audit mirror."""
    return [(row["tried"], row["failures"]) for row in mirror_rows(gateway[2])
            if row["requested_model"] == model]


def fleet_of(gateway: tuple[str, str, Path]) -> dict[str, dict[str, object]]:
    return httpx.get(f"{gateway[0]}/admin/fleet", timeout=30,
                     headers={"authorization": f"Bearer {ADMIN_KEY}"}).json()["backends"]


def burst(
    gateway: tuple[str, str, Path], model: str, engines: dict[str, Engine]
) -> dict[str, int]:
    url, key, _ = gateway
    for engine in engines.values():
        engine.mark()

    async def one(client: openai.AsyncOpenAI, i: int) -> str:
        raw = await client.chat.completions.with_raw_response.create(
            model=model, max_tokens=1000, messages=[{"role": "user", "content": f"{i} {PROMPT}"}],
            extra_body={"ignore_eos": True})
        return raw.headers["x-gateway-backend"]

    async def main() -> list[str]:
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0,
                                      timeout=300) as client:
            return await asyncio.gather(*(one(client, i) for i in range(CONCURRENT)))

    served = asyncio.run(main())
    return {name: served.count(name) for name in engines}


def wait_until_scraped(gateway: tuple[str, str, Path]) -> None:
    for _ in range(600):
        fleet = fleet_of(gateway)
        # Idle by a fresh scrape: a loaded CI machine can make scrapes time out for a while,
        # and an old "idle" reading must not start the next burst.
        if all(fleet[n]["kv_capacity_tokens"] and fleet[n]["running"] == 0
               and fleet[n]["scrape_age_s"] is not None and fleet[n]["scrape_age_s"] < 2
               for n in fleet):
            return
        time.sleep(0.1)
    raise AssertionError(f"the gateway never saw both engines idle: {fleet}")


def test_load_aware_keeps_the_small_engine_out_of_its_queue_round_robin_does_not(
    gateway_url: tuple[str, str, Path], vllm_url: str, vllm_small_url: str,
) -> None:
    engines = {"big": Engine(vllm_url), "small": Engine(vllm_small_url)}
    wait_until_scraped(gateway_url)
    fleet = fleet_of(gateway_url)
    assert fleet["big"]["kv_capacity_tokens"] > 4 * fleet["small"]["kv_capacity_tokens"] > 0

    small = engines["small"]
    blind = burst(gateway_url, "blind", engines)
    assert blind == {"big": 6, "small": 5}
    # Five long requests on 4,096 tokens of KV: some waited (the engine's own
    # queue-time histogram, which a sampler cannot miss) or were preempted.
    blind_queue_s = small.read("vllm:request_queue_time_seconds_sum") - small.queue_s_before
    blind_preempted = small.read("vllm:num_preemptions_total") - small.preemptions_before
    # Whether those five overlapped on the engine depends on how fast a loaded machine sends
    # them, so the baseline's queueing is reported, not asserted; the load-aware checks
    # below are the property and do not depend on timing.
    print(f"round-robin on the small engine: queue {blind_queue_s:.2f} s, "
          f"{blind_preempted:.0f} preemptions")

    wait_until_scraped(gateway_url)
    # Every reply was 1,000 tokens (ignore_eos): that is what KV is held for, not the ~500
    # that dividing one scrape interval's tokens by the requests finished in it made of them.
    measured = fleet_of(gateway_url)["small"]["claim_generation_tokens"]
    assert isinstance(measured, float) and 950 <= measured <= 1000, measured
    aware = burst(gateway_url, "aware", engines)
    aware_queue_s = small.read("vllm:request_queue_time_seconds_sum") - small.queue_s_before
    after = (attempts(gateway_url, "aware"), fleet_of(gateway_url))
    assert sum(aware.values()) == CONCURRENT
    assert small.queued_long() == small.queued_long_before, (aware, after)
    assert small.read("vllm:num_preemptions_total") == small.preemptions_before, (aware, after)
    assert aware_queue_s < 0.1 * CONCURRENT, (aware_queue_s, aware, after)  # scheduling only
