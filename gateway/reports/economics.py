"""Whether inference pays, per backend: the rollup sums and latency histograms beside what the
cost model says its GPUs cost (GPU-hours paid while the policy declared the deployment, busy
and idle). Pure. Idle capacity shows as a low busy share and a high $/1K tokens."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gateway.audit.rollup import percentile
from gateway.reports.cost_model import GpuDay
from gateway.reports.rollup_repository import BackendSums

QUANTILES = (0.50, 0.95, 0.99)


@dataclass(frozen=True, slots=True)
class GpuPaid:
    """One deployment's GPUs over the whole range, summed from the cost model's days."""

    paid_s: float
    gpu_s: float  # GPU-seconds paid (seconds × GPU count)
    paid_micro_usd: int
    busy_minutes: int
    idle_micro_usd: int

    @property
    def gpu_count(self) -> float:
        return self.gpu_s / self.paid_s if self.paid_s else 0.0


def gpu_paid(days: Iterable[GpuDay]) -> dict[str, GpuPaid]:
    found: dict[str, GpuPaid] = {}
    for d in days:
        was = found.get(d.backend, GpuPaid(0.0, 0.0, 0, 0, 0))
        found[d.backend] = GpuPaid(was.paid_s + d.paid_s, was.gpu_s + d.gpu_s,
                                   was.paid_micro_usd + d.paid_micro_usd,
                                   was.busy_minutes + d.busy_minutes,
                                   was.idle_micro_usd + d.idle_micro_usd)
    return found


@dataclass(frozen=True, slots=True)
class BackendEconomics:
    backend: str
    zone: str
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    output_input_ratio: float | None
    decode_tokens_per_s: float | None  # one stream's speed after its first token
    prompt_tokens_per_gpu_s: float | None  # per GPU, over the minutes it was busy
    output_tokens_per_gpu_s: float | None
    tokens_per_gpu_hour: float | None  # prompt + output tokens per GPU-hour paid
    gpu_hours_paid: float | None
    api_cost_micro_usd: int  # what a metered backend charged; 0 for GPU-billed ones
    gpu_cost_micro_usd: int | None  # GPU-hours paid over the range, busy or not
    idle_gpu_micro_usd: int | None  # the part of it no request used
    usd_per_1k_micro: int | None  # effective: (GPU or API cost) per 1K tokens
    latency_s: tuple[float | None, ...]  # p50, p95, p99 of the whole request
    ttft_s: tuple[float | None, ...]  # p50, p95, p99 of the time to first token
    kv_hit_rate: float | None  # mean prefix-cache hit rate the engine reported
    cached_share: float | None  # share of prompt tokens served from the cache
    busy_share: float | None  # paid minutes with traffic over minutes paid
    gpu_util: float | None = None  # mean DCGM utilisation over the range, where scraped
    gpu_memory_used_bytes: int | None = None  # the most any minute used, all its GPUs


def _share(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def idle_sums(backend: str, zone: str) -> BackendSums:
    """A deployment with GPUs that served nothing in the range still cost money."""
    return BackendSums(backend, zone, 0, 0, 0, 0, 0, 0, 0.0, 0, 0.0, 0)


def backend_economics(sums: BackendSums, latency: dict[int, int], ttft: dict[int, int],
                      gpu: GpuPaid | None,
                      dcgm: tuple[float | None, int | None] = (None, None)) -> BackendEconomics:
    tokens = sums.prompt_tokens + sums.completion_tokens
    api_cost = sums.cost_micro_usd if gpu is None else 0
    spent = gpu.paid_micro_usd if gpu is not None else api_cost
    per_gpu_s = prompt_rate = output_rate = busy_share = None
    if gpu is not None:
        busy_gpu_s = gpu.busy_minutes * 60 * gpu.gpu_count
        prompt_rate = _share(sums.prompt_tokens, busy_gpu_s)
        output_rate = _share(sums.completion_tokens, busy_gpu_s)
        per_gpu_s = _share(tokens * 3600, gpu.gpu_s)
        busy_share = _share(min(gpu.busy_minutes * 60, gpu.paid_s), gpu.paid_s)
    return BackendEconomics(
        backend=sums.backend,
        zone=sums.zone,
        requests=sums.requests,
        errors=sums.errors,
        prompt_tokens=sums.prompt_tokens,
        completion_tokens=sums.completion_tokens,
        output_input_ratio=_share(sums.completion_tokens, sums.prompt_tokens),
        decode_tokens_per_s=_share(sums.decode_tokens, sums.decode_s_sum),
        prompt_tokens_per_gpu_s=prompt_rate,
        output_tokens_per_gpu_s=output_rate,
        tokens_per_gpu_hour=per_gpu_s,
        gpu_hours_paid=gpu.gpu_s / 3600 if gpu is not None else None,
        api_cost_micro_usd=api_cost,
        gpu_cost_micro_usd=gpu.paid_micro_usd if gpu is not None else None,
        idle_gpu_micro_usd=gpu.idle_micro_usd if gpu is not None else None,
        usd_per_1k_micro=round(spent * 1000 / tokens) if tokens else None,
        latency_s=tuple(percentile(latency, q) for q in QUANTILES),
        ttft_s=tuple(percentile(ttft, q) for q in QUANTILES),
        kv_hit_rate=_share(sums.kv_hit_sum, sums.kv_hit_count),
        cached_share=_share(sums.cached_tokens, sums.prompt_tokens),
        busy_share=busy_share,
        gpu_util=dcgm[0],
        gpu_memory_used_bytes=dcgm[1],
    )
