"""Whether inference pays: per backend, from the rollup sums and what the policy says its GPUs
cost. Pure. The GPUs are paid for every hour of the range whether they serve or idle, so idle
capacity shows up as a high $/1K tokens and a low busy share."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.audit.rollup import percentile
from gateway.budget.pricing import MICRO_PER_USD
from gateway.reports.queries import BackendSums

QUANTILES = (0.50, 0.95, 0.99)


@dataclass(frozen=True, slots=True)
class GpuFacts:
    """A self-hosted deployment's GPUs, from the policy's `gpu:` block."""

    hourly_usd: float  # the whole deployment (every GPU) per hour
    count: int | None  # GPUs in it; None when the policy at hand does not say


@dataclass(frozen=True, slots=True)
class BackendEconomics:
    backend: str
    zone: str
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    output_input_ratio: float | None
    output_tokens_per_s: float | None  # decoding speed after the first token
    tokens_per_gpu_hour: float | None  # prompt + output tokens per GPU-hour paid
    cost_micro_usd: int  # what the audit rows recorded
    gpu_cost_micro_usd: int | None  # what the GPUs cost over the range, busy or not
    usd_per_1k_micro: int | None  # effective: GPU cost (self-hosted) or recorded cost, per 1K
    latency_s: tuple[float | None, ...]  # p50, p95, p99 of the whole request
    ttft_s: tuple[float | None, ...]  # p50, p95, p99 of the time to first token
    kv_hit_rate: float | None  # mean prefix-cache hit rate the engine reported
    cached_share: float | None  # share of prompt tokens served from the cache
    busy_share: float | None  # minutes with traffic over minutes paid for


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def idle_sums(backend: str, zone: str) -> BackendSums:
    """A deployment with GPUs that served nothing in the range still cost money."""
    return BackendSums(backend, zone, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0)


def backend_economics(
    sums: BackendSums,
    latency: dict[int, int],
    ttft: dict[int, int],
    busy_minutes: int,
    gpu: GpuFacts | None,
    paid_hours: float,
) -> BackendEconomics:
    tokens = sums.prompt_tokens + sums.completion_tokens
    gpu_cost = None
    tokens_per_gpu_hour = busy_share = None
    if gpu is not None:
        gpu_cost = round(gpu.hourly_usd * paid_hours * MICRO_PER_USD)
        if gpu.count is not None:
            tokens_per_gpu_hour = _share(tokens, gpu.count * paid_hours)
        busy_share = _share(min(busy_minutes, paid_hours * 60), paid_hours * 60)
    spent = gpu_cost if gpu_cost is not None else sums.cost_micro_usd
    return BackendEconomics(
        backend=sums.backend,
        zone=sums.zone,
        requests=sums.requests,
        errors=sums.errors,
        prompt_tokens=sums.prompt_tokens,
        completion_tokens=sums.completion_tokens,
        output_input_ratio=_share(sums.completion_tokens, sums.prompt_tokens),
        output_tokens_per_s=_share(sums.completion_tokens, sums.decode_s_sum),
        tokens_per_gpu_hour=tokens_per_gpu_hour,
        cost_micro_usd=sums.cost_micro_usd,
        gpu_cost_micro_usd=gpu_cost,
        usd_per_1k_micro=round(spent * 1000 / tokens) if tokens else None,
        latency_s=tuple(percentile(latency, q) for q in QUANTILES),
        ttft_s=tuple(percentile(ttft, q) for q in QUANTILES),
        kv_hit_rate=_share(sums.kv_hit_sum, sums.kv_hit_count),
        cached_share=_share(sums.cached_tokens, sums.prompt_tokens),
        busy_share=busy_share,
    )
