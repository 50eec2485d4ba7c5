"""The sim's real-time engine loop: token delivery, aborts, and the vLLM metrics it records."""

from __future__ import annotations

import asyncio

import pytest

from gateway.sim.config import SimConfig
from gateway.sim.engine import RequestHandle, SimEngine
from gateway.sim.metrics import SimMetrics

CONFIG = SimConfig(
    block_size=4,
    num_gpu_blocks=64,
    max_model_len=128,
    max_num_seqs=2,
    time_scale=0.05,
    model_name="unit",
)
LABELS = {"engine": "0", "model_name": "unit"}


def sample(metrics: SimMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, {**LABELS, **labels})
    assert value is not None, name
    return value


async def collect(handle: RequestHandle) -> list[tuple[int, str | None]]:
    events = []
    while True:
        event = await handle.next_event()
        events.append((event.index, event.finish_reason))
        if event.finish_reason is not None:
            return events


async def test_tokens_arrive_in_order_and_metrics_add_up() -> None:
    metrics = SimMetrics(CONFIG)
    engine = SimEngine(CONFIG, metrics)
    await engine.start()
    try:
        handles = [
            engine.submit(range(1000 * i, 1000 * i + 10), range(50 + i), "stop", 64)
            for i in range(1, 4)
        ]
        results = await asyncio.gather(*(collect(h) for h in handles))
    finally:
        await engine.stop()
    for i, events in enumerate(results, start=1):
        assert [index for index, _ in events] == list(range(50 + i))
        assert events[-1][1] == "stop" and handles[i - 1].usage.completion_tokens == 50 + i
    assert sample(metrics, "vllm:generation_tokens_total") == 51 + 52 + 53
    assert sample(metrics, "vllm:prompt_tokens_total") == 30
    assert sample(metrics, "vllm:request_success_total", finished_reason="stop") == 3
    assert sample(metrics, "vllm:time_to_first_token_seconds_count") == 3
    assert sample(metrics, "vllm:inter_token_latency_seconds_count") == 50 + 51 + 52
    assert sample(metrics, "vllm:request_queue_time_seconds_count") == 3
    assert sample(metrics, "vllm:num_requests_running") == 0
    assert sample(metrics, "vllm:kv_cache_usage_perc") == 0.0


async def test_step_sleeps_are_scaled_model_time() -> None:
    config = SimConfig(decode_step_base_s=0.2, decode_step_per_seq_s=0.0, time_scale=0.1)
    metrics = SimMetrics(config)
    engine = SimEngine(config, metrics)
    await engine.start()
    try:
        await engine.submit(range(300, 308), range(3), "length", 3).wait_finished()
    finally:
        await engine.stop()
    labels = {"model_name": config.model_name}
    ttft = sample(metrics, "vllm:time_to_first_token_seconds_sum", **labels)
    e2e = sample(metrics, "vllm:e2e_request_latency_seconds_sum", **labels)
    assert 0.02 <= ttft < 0.2  # one 0.2 s step (plus a sliver of prefill), scaled by 0.1
    assert e2e >= 0.06
    assert sample(metrics, "vllm:request_success_total", finished_reason="length", **labels) == 1


async def test_abort_frees_the_request_and_counts_it() -> None:
    metrics = SimMetrics(CONFIG)
    engine = SimEngine(CONFIG, metrics)
    await engine.start()
    try:
        handle = engine.submit(range(500, 520), range(100), "stop", 100)
        await handle.next_event()
        assert engine.scheduler.pool.num_used > 0
        handle.abort()
        assert await handle.wait_finished() == "abort"
        handle.abort()  # idempotent
    finally:
        await engine.stop()
    assert engine.scheduler.pool.num_used == 0
    assert sample(metrics, "vllm:request_success_total", finished_reason="abort") == 1


async def test_stop_aborts_what_is_still_pending() -> None:
    engine = SimEngine(CONFIG, SimMetrics(CONFIG))
    await engine.start()
    handles = [engine.submit(range(700, 710), range(100), "stop", 100) for _ in range(3)]
    await engine.stop()
    assert [await h.wait_finished() for h in handles] == ["abort"] * 3
    assert not engine.scheduler.has_work


async def test_a_crashed_loop_ends_requests_and_reports_dead(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = SimEngine(CONFIG, SimMetrics(CONFIG))

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine.scheduler, "schedule", broken)
    await engine.start()
    assert engine.alive
    handle = engine.submit(range(900, 910), range(5), "stop", 5)
    assert await handle.wait_finished() == "abort"
    assert not engine.alive and "sim engine loop crashed" in caplog.text
    await engine.stop()
