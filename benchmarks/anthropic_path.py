"""The Anthropic path's price: one gateway, one mock upstream answering the same text in
Anthropic's Messages dialect or in the OpenAI-compatible one, measured back to back.

Everything but the provider is identical (auth, classification, policy, budget, audit, the
mock's timing), so the difference is translation: request, reply, stream events. The target
(issue 3) is at most 0.2 ms added per request at concurrency 1.
"""

from __future__ import annotations

from collections.abc import Callable

from loadgen import LoadPlan, Probe, Target
from overhead_report import Level
from path_pairs import PathRun, measure_pairs, rows
from tables import render_markdown, render_text

OPENAI_MODEL = "bench"
ANTHROPIC_MODEL = "bench-anthropic"
TARGET_MS = 0.2
LEVELS = (Level(False, 1), Level(True, 1))


def measure_paths(
    workers: int, gateway_port: int, key: str, probe: Probe,
    *, duration_s: float, warmup_s: float, repeats: int, processes: int,
    progress: Callable[[str], None],
) -> list[PathRun]:
    def plan(model: str) -> Callable[[Level], LoadPlan]:
        def for_level(level: Level) -> LoadPlan:
            target = Target.chat("127.0.0.1", gateway_port, model, level.stream, api_key=key)
            return LoadPlan(target, level.concurrency, duration_s, warmup_s, processes)
        return for_level

    return measure_pairs("anthropic", workers, LEVELS,
                         ((OPENAI_MODEL, plan(OPENAI_MODEL)),
                          (ANTHROPIC_MODEL, plan(ANTHROPIC_MODEL))),
                         probe, repeats=repeats, progress=progress)


HEADERS = ("workers", "mode", "c", "OpenAI path p50 ms", "Anthropic path p50 ms", "+p50 ms",
           "+p99 ms", "OpenAI path CPU ms/req", "Anthropic path CPU ms/req", "+CPU ms/req",
           "errors", "≤ 0.2 ms")


def report_text(runs: list[PathRun]) -> str:
    return ("\nAnthropic path vs the OpenAI-compatible path (same gateway, same mock, medians of "
            "back-to-back pairs):\n\n" + render_text(HEADERS, rows(runs, "chat", TARGET_MS)))


def report_markdown(runs: list[PathRun]) -> str:
    return ("### Anthropic path vs the OpenAI-compatible path\n\n"
            "Same gateway, same mock upstream answering in each dialect; medians of "
            "back-to-back pairs. Target: at most 0.2 ms added at concurrency 1.\n\n"
            + render_markdown(HEADERS, rows(runs, "chat", TARGET_MS)))
