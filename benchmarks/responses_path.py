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

import orjson
from loadgen import LoadPlan, Probe, Target
from overhead_report import Level
from path_pairs import PathRun, cpu_ms, fmt, measure_pairs, rows
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


def measure_paths(
    workers: int, gateway_port: int, key: str, probe: Probe,
    *, duration_s: float, warmup_s: float, repeats: int, processes: int,
    progress: Callable[[str], None],
) -> list[PathRun]:
    def plan(make: Callable[..., Target]) -> Callable[[Level], LoadPlan]:
        def for_level(level: Level) -> LoadPlan:
            target = make("127.0.0.1", gateway_port, MODEL, level.stream, api_key=key)
            return LoadPlan(target, level.concurrency, duration_s, warmup_s, processes)
        return for_level

    return measure_pairs("responses", workers, LEVELS,
                         (("chat", plan(Target.chat)), ("responses", plan(Target.responses))),
                         probe, repeats=repeats, progress=progress)


HEADERS = ("workers", "mode", "c", "chat path p50 ms", "Responses path p50 ms", "+p50 ms",
           "+p99 ms", "chat path CPU ms/req", "Responses path CPU ms/req", "+CPU ms/req",
           "errors", "≤ 0.1 ms")


def cpu_spread(runs: list[PathRun]) -> str:
    """How far apart repeats of the same path are: the noise the added CPU sits in."""
    spreads = []
    for run in runs:
        values = [v for v in map(cpu_ms, run.reference) if v is not None]
        if len(values) > 1:
            spreads.append(statistics.pstdev(values))
    return fmt(max(spreads)) if spreads else "–"


def _translation_line() -> str:
    plain, event = translation_us()
    return (f"translation alone (in-process): {plain:.1f} µs per plain request, "
            f"{event:.2f} µs per stream event")


def report_text(runs: list[PathRun]) -> str:
    return ("\nResponses path vs the chat path (same gateway, same mock, medians of "
            "back-to-back pairs):\n\n" + render_text(HEADERS, rows(runs, "plain", TARGET_MS))
            + f"\nchat path CPU spread between repeats (stdev): {cpu_spread(runs)} ms/req\n"
            + _translation_line() + "\n")


def report_markdown(runs: list[PathRun]) -> str:
    return ("### Responses path vs the chat path\n\n"
            "Same gateway, same OpenAI-compatible mock upstream; the Responses request is "
            "translated to chat and back; medians of back-to-back pairs. Target: at most "
            "0.1 ms added p50 at concurrency 1.\n\n"
            + render_markdown(HEADERS, rows(runs, "plain", TARGET_MS))
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
