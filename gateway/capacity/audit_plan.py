"""`gateway plan --from-audit`: the sizing arithmetic fed by observed traffic. For each
self-hosted deployment: GPUs to hold the observed peak (with headroom), what the same traffic
costs on the baseline API a month, the QPS at which owning beats renting, and what sending the
busiest few per cent of load to an API instead would save. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gateway.capacity.observed import ObservedLoad
from gateway.capacity.sizing import (
    HOURS_PER_MONTH,
    Hardware,
    ModelShape,
    SizingPlan,
    Workload,
    decode_tokens_per_s_per_gpu,
    size,
)

SPILL_SHARES = (0.01, 0.05, 0.10)
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


@dataclass(frozen=True, slots=True)
class Spill:
    share: float  # of the busiest minutes sent to an API
    sessions: int  # what the deployment is then sized for
    gpus: int
    spilled_share: float  # of the request-seconds that go to the API
    api_monthly_usd: float  # what those cost on the baseline
    saved_monthly_usd: float  # GPUs no longer paid for, less the API spend


@dataclass(frozen=True, slots=True)
class DeploymentPlan:
    backend: str
    observed: ObservedLoad
    tokens_per_s_per_gpu: float | None  # given, estimated or observed; None: not sized
    plan: SizingPlan
    baseline_monthly_usd: float  # the observed traffic, a month of it, on the baseline
    break_even_qps: float | None  # QPS above which the planned GPUs cost less than the API
    spills: tuple[Spill, ...]


def _quantile(load: tuple[tuple[float, int], ...], minutes: int, q: float) -> float:
    """The q-quantile of per-minute concurrency over every minute of the range (minutes
    without traffic count as zero)."""
    rank = math.ceil(q * minutes)
    seen = max(0, minutes - sum(n for _, n in load))  # the quiet minutes, all zero
    if rank <= seen:
        return 0.0
    for value, n in load:
        seen += n
        if seen >= rank:
            return value
    return load[-1][0] if load else 0.0


def _capacity(observed: ObservedLoad, model: ModelShape, hw: Hardware,
              gpu_count: int | None) -> tuple[float | None, str]:
    """Output tokens/s one GPU can carry: given, else the memory-bandwidth estimate, raised to
    what the busiest minute showed per GPU if that was more. The busiest minute alone is
    demand, not capacity: a quiet deployment's would size GPUs for traffic it never saw."""
    if hw.tokens_per_s_per_gpu:
        return hw.tokens_per_s_per_gpu, "given"
    work = Workload(observed.prompt_tokens_p90, observed.output_tokens_p90, sessions=1)
    estimate = decode_tokens_per_s_per_gpu(model, work, hw)
    if estimate is None:
        return None, "not sized"
    seen = observed.peak_output_tokens_per_s / (gpu_count or 1)
    return (seen, "observed") if seen > estimate else (estimate, "memory bandwidth")


def plan_deployment(observed: ObservedLoad, model: ModelShape, hw: Hardware, headroom: float,
                    gpu_count: int | None) -> DeploymentPlan:
    rate, basis = _capacity(observed, model, hw, gpu_count)
    hw = replace(hw, tokens_per_s_per_gpu=rate)

    def sized(sessions: float, qps: float) -> SizingPlan:
        # Without a rate the plan sizes memory alone and says so (throughput_basis).
        work = Workload(observed.prompt_tokens_p90, observed.output_tokens_p90,
                        sessions=sessions * (1 + headroom),
                        peak_qps=qps * (1 + headroom) if rate else 0.0)
        return replace(size(model, work, hw), throughput_basis=basis)

    plan = sized(observed.peak_sessions, observed.peak_qps)
    months = observed.minutes / 60 / HOURS_PER_MONTH
    baseline_monthly = observed.baseline_micro_usd / 1e6 / months if months else 0.0
    per_request = observed.baseline_micro_usd / 1e6 / observed.requests \
        if observed.requests else 0.0
    break_even = plan.monthly_usd / (per_request * SECONDS_PER_MONTH) if per_request else None
    total = sum(c * n for c, n in observed.in_flight)
    spills = []
    for share in SPILL_SHARES:
        cap = _quantile(observed.in_flight, observed.minutes, 1 - share)
        # Arrivals scale with the load kept at the same latency (Little's law).
        capped = sized(cap, observed.peak_qps * cap / (observed.peak_sessions or 1))
        spilled = sum(max(0.0, c - cap) * n for c, n in observed.in_flight) / total \
            if total else 0.0
        api = spilled * baseline_monthly
        spills.append(Spill(share, capped.concurrent_sessions, capped.gpus, spilled,
                            round(api, 2), round(plan.monthly_usd - capped.monthly_usd - api,
                                                 2)))
    return DeploymentPlan(observed.backend, observed, rate, plan, round(baseline_monthly, 2),
                          break_even, tuple(spills))
