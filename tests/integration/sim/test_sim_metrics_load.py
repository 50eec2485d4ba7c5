"""/metrics under a burst against a tiny KV cache: vLLM's names, labels and buckets, and the
running / waiting / KV-usage gauges moving (and preemptions happening) as in a real vLLM."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import httpx
import pytest
from openai import AsyncOpenAI
from prometheus_client.parser import text_string_to_metric_families

from gateway.sim import SimConfig

TINY = SimConfig(
    model_name="sim-tiny",
    block_size=16,
    # 576 tokens: four ~240-token sequences cannot all fit, even sharing the cached system
    # prompt, so the burst must preempt.
    num_gpu_blocks=36,
    max_model_len=512,
    max_num_seqs=4,
    time_scale=0.25,
    seed=3,
)
BURST = 12
OUTPUT_TOKENS = 120
SYSTEM = " ".join(f"Clause {i} of the shared operating instructions applies." for i in range(8))


@pytest.fixture(scope="module")
def tiny_url(sim_server: Callable[[SimConfig], AbstractContextManager[str]]) -> Iterator[str]:
    with sim_server(TINY) as url:
        yield url


async def burst(url: str) -> list[int]:
    async with AsyncOpenAI(base_url=f"{url}/v1", api_key="sk-sim", max_retries=0) as client:

        async def one(i: int) -> int:
            response = await client.chat.completions.create(
                model="sim-tiny",
                messages=[
                    {"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"Question number {i}: what is going on here?"},
                ],
                max_tokens=OUTPUT_TOKENS,
                extra_body={"ignore_eos": True},
            )
            assert response.usage is not None
            return response.usage.prompt_tokens

        return await asyncio.gather(*(one(i) for i in range(BURST)))


async def watch(
    url: str, metrics_of: Callable[[str], dict[str, float]], stop: asyncio.Event
) -> list[dict[str, float]]:
    seen: list[dict[str, float]] = []
    while not stop.is_set():
        seen.append(await asyncio.to_thread(metrics_of, url))
        await asyncio.sleep(0.01)
    return seen


async def test_gauges_move_under_a_burst(
    tiny_url: str, metrics_of: Callable[[str], dict[str, float]]
) -> None:
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(tiny_url, metrics_of, stop))
    prompt_tokens = await burst(tiny_url)
    stop.set()
    seen = await watcher

    running = [s["vllm:num_requests_running"] for s in seen]
    waiting = [s["vllm:num_requests_waiting"] for s in seen]
    usage = [s["vllm:kv_cache_usage_perc"] for s in seen]
    assert max(running) == TINY.max_num_seqs  # batching is capped, and reached
    assert max(waiting) >= BURST - TINY.max_num_seqs - 2  # the rest queue up
    assert max(usage) > 0.8 and all(0.0 <= u <= 1.0 for u in usage)

    after = metrics_of(tiny_url)
    assert after["vllm:num_requests_running"] == 0 and after["vllm:num_requests_waiting"] == 0
    assert after["vllm:kv_cache_usage_perc"] == 0.0
    assert after["vllm:num_preemptions_total"] > 0  # the KV cache was too small for the batch
    assert after["vllm:request_success_total{finished_reason=length}"] == BURST
    assert after["vllm:generation_tokens_total"] == BURST * OUTPUT_TOKENS
    assert after["vllm:prompt_tokens_total"] == sum(prompt_tokens)
    assert after["vllm:prefix_cache_queries_total"] == sum(prompt_tokens)
    # The shared system prompt is computed once and then hit (in whole 16-token blocks).
    assert after["vllm:prefix_cache_hits_total"] >= (BURST - TINY.max_num_seqs) * 32
    assert after["vllm:prompt_tokens_cached_total"] == after["vllm:prefix_cache_hits_total"]
    assert after["vllm:time_to_first_token_seconds_count"] == BURST
    assert after["vllm:e2e_request_latency_seconds_count"] == BURST
    assert after["vllm:inter_token_latency_seconds_count"] == BURST * (OUTPUT_TOKENS - 1)
    assert after["vllm:request_queue_time_seconds_count"] == BURST


def test_exposition_matches_vllm_names_labels_and_buckets(tiny_url: str) -> None:
    text = httpx.get(f"{tiny_url}/metrics").text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for name, kind in {
        "vllm:num_requests_running": "gauge",
        "vllm:num_requests_waiting": "gauge",
        "vllm:kv_cache_usage_perc": "gauge",
        "vllm:cache_config_info": "gauge",
        "vllm:prompt_tokens": "counter",
        "vllm:generation_tokens": "counter",
        "vllm:prefix_cache_queries": "counter",
        "vllm:prefix_cache_hits": "counter",
        "vllm:prompt_tokens_cached": "counter",
        "vllm:num_preemptions": "counter",
        "vllm:request_success": "counter",
        "vllm:time_to_first_token_seconds": "histogram",
        "vllm:inter_token_latency_seconds": "histogram",
        "vllm:e2e_request_latency_seconds": "histogram",
        "vllm:request_queue_time_seconds": "histogram",
    }.items():
        assert families[name].type == kind, name
        for sample in families[name].samples:
            assert sample.labels["engine"] == "0", name
            if name != "vllm:cache_config_info":
                assert sample.labels["model_name"] == "sim-tiny", name

    (info,) = families["vllm:cache_config_info"].samples
    assert info.value == 1.0
    assert info.labels["block_size"] == "16" and info.labels["num_gpu_blocks"] == "36"
    assert info.labels["kv_cache_size_tokens"] == "576"
    assert info.labels["enable_prefix_caching"] == "True"

    def bounds(name: str) -> list[str]:
        return [s.labels["le"] for s in families[name].samples if s.name.endswith("_bucket")]

    assert bounds("vllm:time_to_first_token_seconds")[:3] == ["0.001", "0.005", "0.01"]
    assert bounds("vllm:time_to_first_token_seconds")[-2:] == ["2560.0", "+Inf"]
    assert bounds("vllm:inter_token_latency_seconds")[-2:] == ["80.0", "+Inf"]
    assert bounds("vllm:e2e_request_latency_seconds")[:2] == ["0.3", "0.5"]
    assert bounds("vllm:request_queue_time_seconds")[-2:] == ["7680.0", "+Inf"]
    reasons = {s.labels["finished_reason"] for s in families["vllm:request_success"].samples}
    assert {"stop", "length", "abort"} <= reasons


def test_two_sims_in_one_process_keep_separate_metrics(
    tiny_url: str, sim_url: str, metrics_of: Callable[[str], dict[str, float]]
) -> None:
    tiny_before, other_before = metrics_of(tiny_url), metrics_of(sim_url)
    reply = httpx.post(
        f"{sim_url}/v1/completions", json={"model": "sim-test", "prompt": "hi", "max_tokens": 3}
    )
    assert reply.status_code == 200
    tiny_after, other_after = metrics_of(tiny_url), metrics_of(sim_url)
    assert other_after["vllm:generation_tokens_total"] == (
        other_before["vllm:generation_tokens_total"] + 3
    )
    assert tiny_after["vllm:generation_tokens_total"] == tiny_before["vllm:generation_tokens_total"]
    families = text_string_to_metric_families(httpx.get(f"{sim_url}/metrics").text)
    models = {s.labels.get("model_name") for f in families for s in f.samples}
    assert models == {"sim-test", None}  # cache_config_info has no model_name, as in vLLM
