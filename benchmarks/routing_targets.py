"""The routing benchmark's verdicts against its targets: load-aware against round-robin at
80 %, preemptions, spill-over, how well each backend's TTFT was predicted, and whether an SLO
rule's tail is no worse than the same run without it (with the interval one run allows).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from routing_fleet import SLO_TTFT_MS, STRATEGIES
from routing_pooled import Pool, p99_difference
from routing_report import RunSummary

CALIBRATION_RANGE = (0.75, 1.33)


def targets(runs: Sequence[RunSummary]) -> list[str]:
    out = ["Against the targets:"]
    by = {(r.strategy, r.load_pct): r for r in runs}
    la_label = STRATEGIES["load_aware"].label
    la, rr = by.get((la_label, 80)), by.get(("round_robin", 80))
    if la and rr:
        ratio = rr.ttft_p99_s / la.ttft_p99_s if la.ttft_p99_s else math.nan
        verdict = "met" if ratio >= 3 else "NOT met"
        out.append(f"- p99 TTFT at 80 %: round-robin {rr.ttft_p99_s * 1000:,.0f} ms vs "
                   f"load-aware {la.ttft_p99_s * 1000:,.0f} ms = {ratio:.2f}× (target ≥ 3×): "
                   f"{verdict}")
    low = [r for r in runs if r.strategy == la_label and r.load_pct <= 80]
    if low:
        total = sum(r.total_preemptions for r in low)
        out.append(f"- preemptions with load-aware admission at ≤ 80 %: {total} (target 0): "
                   f"{'met' if total == 0 else 'NOT met'}")
    for r in runs:
        if r.strategy == la_label:
            out.append(f"- spill-over at {r.load_pct} %: {r.spill_share * 100:.1f} % of requests,"
                       f" ${r.cost_per_1k_usd:.3f} per 1,000 requests")
    out += calibration_targets(runs)
    slo = by.get((STRATEGIES["load_aware_slo"].label, 80))
    if la and slo:
        kept = slo.ttft_p99_s <= la.ttft_p99_s and slo.ttft_over_slo_share <= 0.05
        out.append(f"- SLO {SLO_TTFT_MS} ms at 80 %: p99 {slo.ttft_p99_s * 1000:,.0f} ms against "
                   f"{la.ttft_p99_s * 1000:,.0f} ms without it{_p99_interval(slo, la)}, "
                   f"{slo.ttft_over_slo_share * 100:.1f} % of requests over the target "
                   f"(targets: no worse, ≤ 5 %): {'met' if kept else 'NOT met'}")
    return out


def _p99_interval(a: RunSummary, b: RunSummary) -> str:
    """The p99 difference's 90 % bootstrap interval over the two runs' requests: one run's
    p99 is its few worst requests, so a difference inside it is this run's noise (pool
    several seeds with routing_pooled.py to narrow it)."""
    if not a.ttfts_s or not b.ttfts_s:
        return ""
    pools = [Pool(ttfts={0: [math.inf if t is None else t for t in r.ttfts_s]}) for r in (a, b)]
    _, low, high = p99_difference(*pools, draws=1000, rng=random.Random(0))
    return f" (difference 90 % interval [{low * 1000:+,.0f}, {high * 1000:+,.0f}] ms)"


def calibration_targets(runs: Sequence[RunSummary]) -> list[str]:
    """Median predicted ÷ measured TTFT within 0.75–1.33 for every self-hosted backend, in
    every run of a load-aware strategy (the others route without engine metrics)."""
    low, high = CALIBRATION_RANGE
    aware = [r for r in runs if r.strategy.startswith("load_aware") and r.diagnosis]
    if not aware:
        return []
    misses, ratios, worst_log = [], [], 0.0
    for r in aware:
        assert r.diagnosis is not None
        for name, ratio in (r.diagnosis.predicted_ttft_ratio_by_backend or {}).items():
            ratios.append(ratio)
            if not low <= ratio <= high:
                misses.append(f"{name} {ratio:.2f} ({r.strategy}, {r.load_pct} %)")
        worst_log = max(worst_log, r.diagnosis.predicted_ttft_abs_log_p90 or 0.0)
    if not ratios:
        return []
    verdict = "met" if not misses else "NOT met: " + "; ".join(misses)
    return [f"- predicted ÷ measured TTFT, median per self-hosted backend: "
            f"{min(ratios):.2f}–{max(ratios):.2f} over {len(aware)} load-aware runs (target "
            f"{low}–{high}): {verdict}; p90 |log(pred ÷ measured)| at most {worst_log:.2f}"]
