"""Per-backend economics from rollup sums and the GPU-hours the cost model says were paid:
every figure by hand."""

from __future__ import annotations

from datetime import date

import pytest

from gateway.audit.rollup import bucket_seconds, latency_bucket
from gateway.reports.cost_model import GpuDay
from gateway.reports.economics import GpuPaid, backend_economics, gpu_paid, idle_sums
from gateway.reports.rollup_repository import BackendSums

SUMS = BackendSums(
    backend="llama-8b", zone="self_hosted", requests=10, errors=1, prompt_tokens=8000,
    completion_tokens=2000, cached_tokens=2000, cost_micro_usd=1234, decode_s_sum=40.0,
    decode_tokens=1990, kv_hit_sum=3.0, kv_hit_count=6,
)
# 2 GPUs for 24 hours at $4.50 an hour for both: $108, 90 minutes of it busy.
DAY_OF_TWO = GpuPaid(paid_s=86_400.0, gpu_s=172_800.0, paid_micro_usd=108_000_000,
                     busy_minutes=90, idle_micro_usd=101_250_000)


def test_a_self_hosted_deployment_is_priced_by_the_gpu_hours_paid() -> None:
    result = backend_economics(SUMS, {}, {}, DAY_OF_TWO)
    assert result.gpu_cost_micro_usd == 108_000_000
    assert result.idle_gpu_micro_usd == 101_250_000
    assert result.gpu_hours_paid == 48.0
    assert result.tokens_per_gpu_hour == 10_000 / 48
    # Effective $ per 1K tokens is what the GPUs cost, not what the rows recorded.
    assert result.usd_per_1k_micro == 108_000_000 * 1000 // 10_000
    assert result.api_cost_micro_usd == 0
    assert result.busy_share == 90 / (24 * 60)
    # Per GPU while busy: 90 minutes on 2 GPUs is 10,800 GPU-seconds.
    assert result.prompt_tokens_per_gpu_s == 8000 / 10_800
    assert result.output_tokens_per_gpu_s == 2000 / 10_800
    assert result.output_input_ratio == 0.25
    # One stream's speed: tokens after the first over the time after the first.
    assert result.decode_tokens_per_s == 1990 / 40
    assert result.kv_hit_rate == 0.5
    assert result.cached_share == 0.25


def test_an_api_backend_is_priced_by_what_it_charged() -> None:
    api = BackendSums("gpt-frontier", "external", 4, 0, 3000, 1000, 0, 50_000, 10.0, 996,
                      0.0, 0)
    result = backend_economics(api, {}, {}, None)
    assert result.gpu_cost_micro_usd is None and result.busy_share is None
    assert result.tokens_per_gpu_hour is None and result.gpu_hours_paid is None
    assert result.api_cost_micro_usd == 50_000
    assert result.usd_per_1k_micro == 12_500  # $0.0125 per 1K tokens
    assert result.kv_hit_rate is None


def test_gpu_days_add_up_per_backend() -> None:
    days = [GpuDay("a", date(2026, 11, 1), 3600.0, 7200.0, 9_000_000, 30, 4_500_000,
                   4_500_000),
            GpuDay("a", date(2026, 11, 2), 1800.0, 3600.0, 4_500_000, 0, 0, 4_500_000),
            GpuDay("b", date(2026, 11, 2), 60.0, 60.0, 100, 1, 100, 0)]
    paid = gpu_paid(days)
    assert paid["a"] == GpuPaid(5400.0, 10_800.0, 13_500_000, 30, 9_000_000)
    assert paid["a"].gpu_count == 2.0
    assert paid["b"].busy_minutes == 1


def test_percentiles_come_from_the_histograms() -> None:
    latency = {latency_bucket(0.1): 50, latency_bucket(1.0): 45, latency_bucket(5.0): 5}
    ttft = {latency_bucket(0.05): 99, latency_bucket(2.0): 1}
    result = backend_economics(SUMS, latency, ttft, None)
    assert result.latency_s == (bucket_seconds(latency_bucket(0.1)),
                                bucket_seconds(latency_bucket(1.0)),
                                bucket_seconds(latency_bucket(5.0)))
    assert result.latency_s[1] == pytest.approx(1.0, rel=0.1)
    assert result.ttft_s[0] == result.ttft_s[1] == bucket_seconds(latency_bucket(0.05))


def test_an_idle_deployment_still_costs_money() -> None:
    paid = GpuPaid(18_000.0, 18_000.0, 10_000_000, 0, 10_000_000)
    result = backend_economics(idle_sums("spare", "self_hosted"), {}, {}, paid)
    assert result.gpu_cost_micro_usd == result.idle_gpu_micro_usd == 10_000_000
    assert result.usd_per_1k_micro is None  # no tokens to spread it over
    assert result.latency_s == (None, None, None)
    assert result.busy_share == 0.0


def test_no_paid_time_means_no_shares() -> None:
    result = backend_economics(SUMS, {}, {}, GpuPaid(0.0, 0.0, 0, 0, 0))
    assert result.gpu_cost_micro_usd == 0
    assert result.busy_share is None and result.tokens_per_gpu_hour is None
