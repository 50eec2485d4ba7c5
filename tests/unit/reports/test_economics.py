"""Per-backend economics from rollup sums and GPU facts: every figure by hand."""

from __future__ import annotations

import pytest

from gateway.audit.rollup import bucket_seconds, latency_bucket
from gateway.reports.economics import GpuFacts, backend_economics, idle_sums
from gateway.reports.queries import BackendSums

SUMS = BackendSums(
    backend="llama-8b", zone="self_hosted", requests=10, errors=1, prompt_tokens=8000,
    completion_tokens=2000, cached_tokens=2000, cost_micro_usd=1234, decode_s_sum=40.0,
    kv_hit_sum=3.0, kv_hit_count=6,
)


def test_a_self_hosted_deployment_is_priced_by_the_gpu_hours_paid() -> None:
    # 2 GPUs at $2.25 each → $4.50 per hour; 24 hours paid → $108, busy 90 minutes.
    result = backend_economics(SUMS, {}, {}, 90, GpuFacts(4.5, 2), paid_hours=24.0)
    assert result.gpu_cost_micro_usd == 108_000_000
    assert result.tokens_per_gpu_hour == 10_000 / 48
    # Effective $ per 1K tokens is what the GPUs cost, not what the rows recorded.
    assert result.usd_per_1k_micro == 108_000_000 * 1000 // 10_000
    assert result.cost_micro_usd == 1234
    assert result.busy_share == 90 / (24 * 60)
    assert result.output_input_ratio == 0.25
    assert result.output_tokens_per_s == 50.0
    assert result.kv_hit_rate == 0.5
    assert result.cached_share == 0.25


def test_an_api_backend_is_priced_by_what_it_charged() -> None:
    api = BackendSums("gpt-frontier", "external", 4, 0, 3000, 1000, 0, 50_000, 10.0, 0.0, 0)
    result = backend_economics(api, {}, {}, 12, None, paid_hours=24.0)
    assert result.gpu_cost_micro_usd is None and result.busy_share is None
    assert result.tokens_per_gpu_hour is None
    assert result.usd_per_1k_micro == 12_500  # $0.0125 per 1K tokens
    assert result.kv_hit_rate is None


def test_without_a_gpu_count_there_is_no_per_gpu_figure() -> None:
    result = backend_economics(SUMS, {}, {}, 0, GpuFacts(4.5, None), paid_hours=10.0)
    assert result.gpu_cost_micro_usd == 45_000_000
    assert result.tokens_per_gpu_hour is None
    assert result.busy_share == 0.0


def test_percentiles_come_from_the_histograms() -> None:
    latency = {latency_bucket(0.1): 50, latency_bucket(1.0): 45, latency_bucket(5.0): 5}
    ttft = {latency_bucket(0.05): 99, latency_bucket(2.0): 1}
    result = backend_economics(SUMS, latency, ttft, 0, None, paid_hours=1.0)
    assert result.latency_s == (bucket_seconds(latency_bucket(0.1)),
                                bucket_seconds(latency_bucket(1.0)),
                                bucket_seconds(latency_bucket(5.0)))
    assert result.latency_s[1] == pytest.approx(1.0, rel=0.1)
    assert result.ttft_s[0] == result.ttft_s[1] == bucket_seconds(latency_bucket(0.05))


def test_an_idle_deployment_still_costs_money() -> None:
    result = backend_economics(idle_sums("spare", "self_hosted"), {}, {}, 0,
                               GpuFacts(2.0, 1), paid_hours=5.0)
    assert result.gpu_cost_micro_usd == 10_000_000
    assert result.usd_per_1k_micro is None  # no tokens to spread it over
    assert result.latency_s == (None, None, None)
    assert result.busy_share == 0.0


def test_no_paid_time_means_no_shares() -> None:
    result = backend_economics(SUMS, {}, {}, 3, GpuFacts(2.0, 1), paid_hours=0.0)
    assert result.gpu_cost_micro_usd == 0
    assert result.busy_share is None and result.tokens_per_gpu_hour is None
