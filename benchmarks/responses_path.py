"""The Responses API path's price: one gateway, one OpenAI-compatible mock upstream, the same
question asked as a chat completion or through /v1/responses, measured back to back.

The Responses request is translated to the chat payload the gateway routes and the reply or
stream translated back (the tenant keeps no content, so nothing is stored): everything else
(auth, classification, policy, budget, audit, the mock's timing) is identical, so the
difference is the translation. The target (issue 21) is at most 0.1 ms added p50 per request
at concurrency 1.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

# The per-result figures are the Anthropic comparison's: same load generator, same probe.
from anthropic_path import _cpu_ms, _fmt, _latency_ms, _latency_p99_ms, _median
from load_result import LoadResult, describe
from loadgen import LoadPlan, Probe, Target, run_load
from overhead_report import Level
from tables import render_markdown, render_text

from gateway.translate.responses import (
    ResponsesEventEncoder,
    native_payload,
    parse_responses_request,
    to_chat_payload,
    to_response,
)

MODEL = "bench"
TARGET_MS = 0.1
LEVELS = (Level(False, 1), Level(True, 1))


@dataclass(frozen=True, slots=True)
class PathRun:
    """Repeated pairs at one level: chat path then Responses path (swapped on odd repeats,
    so drift in the machine favours neither)."""

    workers: int
    level: Level
    chat: tuple[LoadResult, ...]
    responses: tuple[LoadResult, ...]


def _added(run: PathRun, figure: Callable[[LoadResult], float | None]) -> float | None:
    """Median over repeats of (Responses − chat) within each back-to-back pair."""
    diffs = [r - c for r, c in ((figure(r), figure(c)) for r, c in
                                zip(run.responses, run.chat, strict=True))
             if r is not None and c is not None]
    return statistics.median(diffs) if diffs else None


def measure_paths(
    workers: int, gateway_port: int, key: str, probe: Probe,
    *, duration_s: float, warmup_s: float, repeats: int, processes: int,
    progress: Callable[[str], None],
) -> list[PathRun]:
    runs = []
    for level in LEVELS:
        def plan(make: Callable[..., Target], level: Level = level) -> LoadPlan:
            target = make("127.0.0.1", gateway_port, MODEL, level.stream, api_key=key)
            return LoadPlan(target, level.concurrency, duration_s, warmup_s, processes)

        chat: list[LoadResult] = []
        responses: list[LoadResult] = []
        order = [("chat", Target.chat, chat), ("responses", Target.responses, responses)]
        for repeat in range(repeats):
            for name, make, results in order if repeat % 2 == 0 else order[::-1]:
                results.append(run_load(plan(make), probe))
                progress(f"  {level.mode} {name:<10} {describe(results[-1])}")
        runs.append(PathRun(workers, level, tuple(chat), tuple(responses)))
    return runs


HEADERS = ("workers", "mode", "c", "chat path p50 ms", "Responses path p50 ms", "+p50 ms",
           "+p99 ms", "chat path CPU ms/req", "Responses path CPU ms/req", "+CPU ms/req",
           "errors", "≤ 0.1 ms")


def rows(runs: list[PathRun]) -> list[list[str]]:
    out = []
    for run in runs:
        added = _added(run, _latency_ms)
        errors = sum(r.errors for r in (*run.chat, *run.responses))
        verdict = "–" if added is None else ("met" if added <= TARGET_MS else "NOT MET")
        mode = "stream (TTFT)" if run.level.stream else "plain"
        out.append([
            str(run.workers), mode, str(run.level.concurrency),
            _fmt(_median(run.chat, _latency_ms)), _fmt(_median(run.responses, _latency_ms)),
            _fmt(added), _fmt(_added(run, _latency_p99_ms)),
            _fmt(_median(run.chat, _cpu_ms)), _fmt(_median(run.responses, _cpu_ms)),
            _fmt(_added(run, _cpu_ms)), str(errors), verdict,
        ])
    return out


def cpu_spread(runs: list[PathRun]) -> str:
    """How far apart repeats of the same path are: the noise the added CPU sits in."""
    spreads = []
    for run in runs:
        values = [v for v in map(_cpu_ms, run.chat) if v is not None]
        if len(values) > 1:
            spreads.append(statistics.pstdev(values))
    return _fmt(max(spreads)) if spreads else "–"


def _translation_line() -> str:
    plain, event = translation_us()
    return (f"translation alone (in-process): {plain:.1f} µs per plain request, "
            f"{event:.2f} µs per stream event")


def report_text(runs: list[PathRun]) -> str:
    return ("\nResponses path vs the chat path (same gateway, same mock, medians of "
            "back-to-back pairs):\n\n" + render_text(HEADERS, rows(runs))
            + f"\nchat path CPU spread between repeats (stdev): {cpu_spread(runs)} ms/req\n"
            + _translation_line() + "\n")


def report_markdown(runs: list[PathRun]) -> str:
    return ("### Responses path vs the chat path\n\n"
            "Same gateway, same OpenAI-compatible mock upstream; the Responses request is "
            "translated to chat and back; medians of back-to-back pairs. Target: at most "
            "0.1 ms added p50 at concurrency 1.\n\n" + render_markdown(HEADERS, rows(runs))
            + "\n\n" + _translation_line() + ".")


def translation_us(rounds: int = 2000) -> tuple[float, float]:
    """The translation alone, in this process: µs per plain request (parse, chat payload,
    pass-through payload, reply) and per streamed token event; medians of 5 timings."""
    body = orjson.dumps({"model": MODEL, "input": "Say hello in one short sentence.",
                         "max_output_tokens": 32})
    completion = orjson.dumps({
        "id": "chatcmpl-1", "created": 1, "choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Hello there, how are you today?"}}],
        "usage": {"prompt_tokens": 14, "completion_tokens": 8, "total_tokens": 22}})
    chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": " word"}}]}

    def plain() -> None:
        parsed = parse_responses_request(orjson.loads(body))
        to_chat_payload(parsed, [])
        native_payload(parsed, [])
        orjson.dumps(to_response(orjson.loads(completion), "resp_1", parsed.echo, MODEL,
                                 store=False))

    def events() -> None:
        encoder = ResponsesEventEncoder("resp_1", {}, MODEL, store=False)
        for _ in range(32):
            encoder.feed(chunk)
        encoder.end()

    def timed(work: Callable[[], None], per: int) -> float:
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(rounds):
                work()
            samples.append((time.perf_counter() - started) / rounds / per * 1e6)
        return statistics.median(samples)

    return timed(plain, 1), timed(events, 33)
