"""The Anthropic path's price: one gateway, one mock upstream answering the same text in
Anthropic's Messages dialect or in the OpenAI-compatible one, measured back to back.

Everything but the provider is identical (auth, classification, policy, budget, audit, the
mock's timing), so the difference is translation: request, reply, stream events. The target
(issue 3) is at most 0.2 ms added per request at concurrency 1.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from load_result import LoadResult, describe
from loadgen import LoadPlan, Probe, Target, run_load
from overhead_report import Level
from process_cpu import GATEWAY_CPU
from tables import render_markdown, render_text

OPENAI_MODEL = "bench"
ANTHROPIC_MODEL = "bench-anthropic"
TARGET_MS = 0.2
LEVELS = (Level(False, 1), Level(True, 1))


@dataclass(frozen=True, slots=True)
class PathRun:
    """Repeated pairs at one level: OpenAI-compatible path, then the Anthropic path (or the
    other way round on odd repeats, so drift in the machine favours neither)."""

    workers: int
    level: Level
    openai: tuple[LoadResult, ...]
    anthropic: tuple[LoadResult, ...]


def measure_paths(
    workers: int, gateway_port: int, key: str, probe: Probe,
    *, duration_s: float, warmup_s: float, repeats: int, processes: int,
    progress: Callable[[str], None],
) -> list[PathRun]:
    runs = []
    for level in LEVELS:
        def plan(model: str, level: Level = level) -> LoadPlan:
            target = Target.chat("127.0.0.1", gateway_port, model, level.stream, api_key=key)
            return LoadPlan(target, level.concurrency, duration_s, warmup_s, processes)

        openai: list[LoadResult] = []
        anthropic: list[LoadResult] = []
        for repeat in range(repeats):
            order = [(OPENAI_MODEL, openai), (ANTHROPIC_MODEL, anthropic)]
            for model, results in order if repeat % 2 == 0 else order[::-1]:
                results.append(run_load(plan(model), probe))
                progress(f"  {level.mode} {model:<16} {describe(results[-1])}")
        runs.append(PathRun(workers, level, tuple(openai), tuple(anthropic)))
    return runs


def _latency_ms(r: LoadResult) -> float | None:
    # Streams take as long as the mock's token timing; what a client waits on is TTFT.
    figures = r.ttft if r.ttft is not None else r.latency
    return figures.p50_ms if figures else None


def _latency_p99_ms(r: LoadResult) -> float | None:
    figures = r.ttft if r.ttft is not None else r.latency
    return figures.p99_ms if figures else None


def _cpu_ms(r: LoadResult) -> float | None:
    if r.probe_delta is None or r.probe_delta[GATEWAY_CPU] < 0 or not r.ok:
        return None
    return r.probe_delta[GATEWAY_CPU] * 1000.0 / r.ok


def _median(results: tuple[LoadResult, ...], figure: Callable[[LoadResult], float | None]
            ) -> float | None:
    values = [v for v in map(figure, results) if v is not None]
    return statistics.median(values) if values else None


def _added(run: PathRun, figure: Callable[[LoadResult], float | None]) -> float | None:
    """Median over repeats of (Anthropic − OpenAI) within each back-to-back pair."""
    diffs = [a - o for a, o in ((figure(a), figure(o)) for a, o in
                                zip(run.anthropic, run.openai, strict=True))
             if a is not None and o is not None]
    return statistics.median(diffs) if diffs else None


HEADERS = ("workers", "mode", "c", "OpenAI path p50 ms", "Anthropic path p50 ms", "+p50 ms",
           "+p99 ms", "OpenAI path CPU ms/req", "Anthropic path CPU ms/req", "+CPU ms/req",
           "errors", "≤ 0.2 ms")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def rows(runs: list[PathRun]) -> list[list[str]]:
    out = []
    for run in runs:
        added = _added(run, _latency_ms)
        errors = sum(r.errors for r in (*run.openai, *run.anthropic))
        verdict = "–" if added is None else ("met" if added <= TARGET_MS else "NOT MET")
        mode = "stream (TTFT)" if run.level.stream else "chat"
        out.append([
            str(run.workers), mode, str(run.level.concurrency),
            _fmt(_median(run.openai, _latency_ms)), _fmt(_median(run.anthropic, _latency_ms)),
            _fmt(added), _fmt(_added(run, _latency_p99_ms)),
            _fmt(_median(run.openai, _cpu_ms)), _fmt(_median(run.anthropic, _cpu_ms)),
            _fmt(_added(run, _cpu_ms)), str(errors), verdict,
        ])
    return out


def report_text(runs: list[PathRun]) -> str:
    return ("\nAnthropic path vs the OpenAI-compatible path (same gateway, same mock, medians of "
            "back-to-back pairs):\n\n" + render_text(HEADERS, rows(runs)))


def report_markdown(runs: list[PathRun]) -> str:
    return ("### Anthropic path vs the OpenAI-compatible path\n\n"
            "Same gateway, same mock upstream answering in each dialect; medians of "
            "back-to-back pairs. Target: at most 0.2 ms added at concurrency 1.\n\n"
            + render_markdown(HEADERS, rows(runs)))
