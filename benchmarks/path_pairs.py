"""Two paths through the same gateway measured back to back (the reference, then the candidate;
swapped on odd repeats, so drift in the machine favours neither), and what the candidate
adds: the shared half of the Anthropic and Responses path comparisons."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from load_result import LoadResult, describe
from loadgen import LoadPlan, Probe, run_load
from overhead_report import Level
from process_cpu import GATEWAY_CPU

Figure = Callable[[LoadResult], float | None]


@dataclass(frozen=True, slots=True)
class PathRun:
    comparison: str  # which pair of paths: "anthropic" or "responses"
    workers: int
    level: Level
    reference: tuple[LoadResult, ...]
    candidate: tuple[LoadResult, ...]


def measure_pairs(
    comparison: str, workers: int, levels: tuple[Level, ...],
    plans: tuple[tuple[str, Callable[[Level], LoadPlan]], tuple[str, Callable[[Level], LoadPlan]]],
    probe: Probe, *, repeats: int, progress: Callable[[str], None],
) -> list[PathRun]:
    """`plans`: (name, plan for a level) of the reference path, then of the candidate."""
    runs = []
    for level in levels:
        results: tuple[list[LoadResult], list[LoadResult]] = ([], [])
        order = [(name, plan, results[i]) for i, (name, plan) in enumerate(plans)]
        for repeat in range(repeats):
            for name, plan, found in order if repeat % 2 == 0 else order[::-1]:
                found.append(run_load(plan(level), probe))
                progress(f"  {level.mode} {name:<16} {describe(found[-1])}")
        runs.append(PathRun(comparison, workers, level, tuple(results[0]), tuple(results[1])))
    return runs


def latency_ms(r: LoadResult) -> float | None:
    # Streams take as long as the mock's token timing; what a client waits on is TTFT.
    figures = r.ttft if r.ttft is not None else r.latency
    return figures.p50_ms if figures else None


def latency_p99_ms(r: LoadResult) -> float | None:
    figures = r.ttft if r.ttft is not None else r.latency
    return figures.p99_ms if figures else None


def cpu_ms(r: LoadResult) -> float | None:
    if r.probe_delta is None or r.probe_delta[GATEWAY_CPU] < 0 or not r.ok:
        return None
    return r.probe_delta[GATEWAY_CPU] * 1000.0 / r.ok


def median(results: tuple[LoadResult, ...], figure: Figure) -> float | None:
    values = [v for v in map(figure, results) if v is not None]
    return statistics.median(values) if values else None


def added(run: PathRun, figure: Figure) -> float | None:
    """Median over repeats of (candidate − reference) within each back-to-back pair."""
    diffs = [c - r for c, r in ((figure(c), figure(r)) for c, r in
                                zip(run.candidate, run.reference, strict=True))
             if c is not None and r is not None]
    return statistics.median(diffs) if diffs else None


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def rows(runs: list[PathRun], plain_mode: str, target_ms: float) -> list[list[str]]:
    """workers, mode, c, both paths' p50, +p50, +p99, both paths' CPU, +CPU, errors, verdict."""
    out = []
    for run in runs:
        extra = added(run, latency_ms)
        errors = sum(r.errors for r in (*run.reference, *run.candidate))
        verdict = "–" if extra is None else ("met" if extra <= target_ms else "NOT MET")
        mode = "stream (TTFT)" if run.level.stream else plain_mode
        out.append([
            str(run.workers), mode, str(run.level.concurrency),
            fmt(median(run.reference, latency_ms)), fmt(median(run.candidate, latency_ms)),
            fmt(extra), fmt(added(run, latency_p99_ms)),
            fmt(median(run.reference, cpu_ms)), fmt(median(run.candidate, cpu_ms)),
            fmt(added(run, cpu_ms)), str(errors), verdict,
        ])
    return out
