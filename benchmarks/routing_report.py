"""Summaries and tables of the routing benchmark: per strategy and load level, TTFT
percentiles, throughput, errors, preemptions, where requests went and what spill-over cost.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from routing_audit import Diagnosis
from routing_client import Outcome
from routing_fleet import SLO_TTFT_MS
from routing_workload import KINDS

INF = math.inf
SLO_TTFT_S = SLO_TTFT_MS / 1000  # every run reports its share of requests over the SLO target


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile; failures enter as +inf (they never got a first token)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100.0 * len(ordered))) - 1]


@dataclass(frozen=True, slots=True)
class FleetSamples:
    """/admin/fleet read once a second during the measured window, per backend."""

    max_waiting: dict[str, int]  # engine queue (scraped), the worst seen
    mean_waiting: dict[str, float]
    max_kv_usage: dict[str, float]


@dataclass(frozen=True, slots=True)
class RunSummary:
    strategy: str
    load_pct: int
    rate: float  # offered mean req/s
    requests: int
    ok: int
    errors: dict[str, int]
    throughput: float  # ok requests / (first due → last end)
    ttft_p50_s: float
    ttft_p99_s: float
    ttft_over_slo_share: float  # requests whose TTFT exceeded SLO_TTFT_S (failures included)
    ttft_p99_by_kind_s: dict[str, float]
    preemptions: dict[str, int]  # Δ vllm:num_preemptions_total per self-hosted backend
    shares: dict[str, float]  # backend → share of ok requests
    spill_share: float
    cost_per_1k_usd: float  # all reported cost (only the external API is priced) / 1,000 req
    prefix_hit: float  # cached ÷ prompt tokens of requests served self-hosted
    fleet: FleetSamples | None
    diagnosis: Diagnosis | None
    gateway_cores: float  # gateway CPU over the measured window and drain
    bench_cores: float  # this benchmark's processes (gateway, simulators, load generator)
    other_cores: float  # CPU of processes outside this benchmark over the same time
    # Every request's TTFT in arrival order (None: no first token), for pooling runs of
    # several seeds (benchmarks/routing_pooled.py): one run's p99 is its 3rd worst request.
    ttfts_s: tuple[float | None, ...] = ()

    @property
    def total_preemptions(self) -> int:
        return sum(self.preemptions.values())


def summarize(
    strategy: str,
    load_pct: int,
    rate: float,
    outcomes: Sequence[Outcome],
    preemptions: dict[str, int],
    base_name: dict[str, str],
    external: str,
    fleet: FleetSamples | None,
    diagnosis: Diagnosis | None,
    cpu: tuple[float, float, float],
) -> RunSummary:
    ok = [o for o in outcomes if o.ok]
    errors: Counter[str] = Counter()
    for o in outcomes:
        if not o.ok:
            errors[f"{o.status}: {(o.error or '')[:60]}"] += 1
    # TTFT is known once the first token arrived, whatever happened later in the stream.
    ttfts = [o.ttft_s if o.ttft_s is not None else INF for o in outcomes]
    by_kind = {}
    for kind in KINDS:
        values = [o.ttft_s if o.ttft_s is not None else INF for o in outcomes if o.kind == kind]
        by_kind[kind] = percentile(values, 99)
    served: Counter[str] = Counter(base_name.get(o.backend or "", o.backend or "?") for o in ok)
    first_due = min(o.scheduled_s for o in outcomes)
    last_end = max((o.done_s or 0.0) for o in ok) if ok else first_due + 1
    n = len(outcomes)
    home = [o for o in ok if base_name.get(o.backend or "") != external]
    prompt = sum(o.prompt_tokens for o in home)
    return RunSummary(
        strategy=strategy,
        load_pct=load_pct,
        rate=rate,
        requests=n,
        ok=len(ok),
        errors=dict(errors),
        throughput=len(ok) / max(1e-9, last_end - first_due),
        ttft_p50_s=percentile(ttfts, 50),
        ttft_p99_s=percentile(ttfts, 99),
        ttft_over_slo_share=sum(1 for t in ttfts if t > SLO_TTFT_S) / n if n else 0.0,
        ttft_p99_by_kind_s=by_kind,
        preemptions=preemptions,
        shares={name: count / len(ok) for name, count in served.items()} if ok else {},
        spill_share=served.get(external, 0) / len(ok) if ok else 0.0,
        cost_per_1k_usd=sum(o.cost_usd for o in ok) / n * 1000 if n else 0.0,
        prefix_hit=sum(o.cached_tokens for o in home) / prompt if prompt else 0.0,
        fleet=fleet,
        diagnosis=diagnosis,
        gateway_cores=cpu[0],
        bench_cores=cpu[1],
        other_cores=cpu[2],
        ttfts_s=tuple(o.ttft_s for o in outcomes),
    )


def _ms(seconds: float) -> str:
    if math.isinf(seconds):
        return "∞"
    if math.isnan(seconds):
        return "–"
    return f"{seconds * 1000:,.0f}"


def _pct(share: float) -> str:
    return f"{share * 100:.1f} %"


MAIN_HEADERS = (
    "load", "strategy", "req/s offered", "requests", "errors", "throughput req/s",
    "TTFT p50 ms", "TTFT p99 ms", f"TTFT > {SLO_TTFT_S * 1000:.0f} ms", "preemptions",
    "spill-over", "cost $/1k req", "RR p99 ÷ this p99",
)


def main_rows(runs: Sequence[RunSummary]) -> list[list[str]]:
    rr_p99 = {r.load_pct: r.ttft_p99_s for r in runs if r.strategy == "round_robin"}
    rows = []
    for r in runs:
        rr = rr_p99.get(r.load_pct)
        ratio = "–"
        if rr is not None and r.ttft_p99_s > 0 and not math.isinf(r.ttft_p99_s):
            ratio = "∞" if math.isinf(rr) else f"{rr / r.ttft_p99_s:.2f}×"
        rows.append([
            f"{r.load_pct} %", r.strategy, f"{r.rate:.1f}", str(r.requests),
            str(r.requests - r.ok), f"{r.throughput:.1f}", _ms(r.ttft_p50_s),
            _ms(r.ttft_p99_s), _pct(r.ttft_over_slo_share), str(r.total_preemptions),
            _pct(r.spill_share),
            f"{r.cost_per_1k_usd:.3f}", ratio,
        ])
    return rows


def detail_headers(backends: Sequence[str]) -> tuple[str, ...]:
    return (
        "load", "strategy",
        *(f"p99 {k} ms" for k in KINDS),
        *(f"share {b}" for b in backends),
        *(f"preempt {b}" for b in backends[:-1]),
        *(f"max queue {b}" for b in backends[:-1]),
    )


def detail_rows(runs: Sequence[RunSummary], backends: Sequence[str]) -> list[list[str]]:
    rows = []
    self_hosted = backends[:-1]
    for r in runs:
        fleet = r.fleet
        rows.append([
            f"{r.load_pct} %", r.strategy,
            *(_ms(r.ttft_p99_by_kind_s[k]) for k in KINDS),
            *(f"{r.shares.get(b, 0.0) * 100:.0f} %" for b in backends),
            *(str(r.preemptions.get(b, 0)) for b in self_hosted),
            *((str(fleet.max_waiting.get(b, 0)) if fleet else "–") for b in self_hosted),
        ])
    return rows


DIAGNOSIS_HEADERS = (
    "load", "strategy", "prefix-cache hit", "affinity decided", "sent to a saturated backend",
    "spilled because (per self-hosted candidate)", "predicted ÷ actual TTFT (median)",
    "predicted ÷ actual TTFT per self-hosted backend (median)", "|log(pred ÷ actual)| p90",
    "SLO not promised", "cores: gateway / whole benchmark / other work",
)


def diagnosis_rows(runs: Sequence[RunSummary]) -> list[list[str]]:
    rows = []
    for r in runs:
        d = r.diagnosis
        reasons = "–"
        if d and d.spill_reasons:
            total = sum(d.spill_reasons.values())
            reasons = ", ".join(f"{kind} {count / total * 100:.0f} %" for kind, count in
                                sorted(d.spill_reasons.items(), key=lambda kv: -kv[1]))
        ratio = d.predicted_ttft_median_ratio if d else None
        by_backend = (d.predicted_ttft_ratio_by_backend if d else None) or {}
        per_backend = ", ".join(f"{name} {value:.2f}" for name, value in by_backend.items())
        log_p90 = d.predicted_ttft_abs_log_p90 if d else None
        rows.append([
            f"{r.load_pct} %", r.strategy, _pct(r.prefix_hit),
            _pct(d.affinity / d.decisions) if d and d.decisions else "–",
            _pct(d.degraded_sends / d.decisions) if d and d.decisions else "–",
            reasons,
            f"{ratio:.2f}" if ratio is not None else "–",
            per_backend or "–",
            f"{log_p90:.2f}" if log_p90 is not None else "–",
            _pct(d.slo_miss / d.decisions) if d and d.decisions else "–",
            f"{r.gateway_cores:.2f} / {r.bench_cores:.2f} / {r.other_cores:.2f}",
        ])
    return rows
