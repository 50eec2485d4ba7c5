"""Latency of the whole classify step (tokens + complexity + sensitivity) by prompt size.

    python benchmarks/classify_latency.py [--calls 1000] [--large-calls 300] [--sizes 200,2000]
                                          [--corpus code|chat] [--vary] [--presidio]
                                          [--models [--router DIR]]

Targets (issue 31): p50 ≤ 0.25 ms and p99 ≤ 1 ms at 2K tokens, ≤ 3 ms at 128K. Prompts are
cut from `--corpus`: the project's README and source (`code`, the default: prose with code
and identifiers, the scanner's hard case) or real users' requests (`chat`), with a few
contact details sprinkled in (most text has nothing to find, some does), sized with the
o200k encoding. As the gateway does after start-up, long-lived objects are frozen out of the
cyclic collector before timing. The policy thresholds are a typical fleet's context windows (8K,
32K, 128K) less 256 output tokens, so small prompts are decided by the proven byte bound and
large ones are counted exactly in the process pool the gateway uses. Each size is timed
twice: a first sight of the text, and the same text again (chat clients resend history,
and exact counts are cached per text). `--presidio` adds the optional Presidio second
opinion, in its own two worker processes as the gateway runs it (GATEWAY_PRESIDIO=true).
`--models` times only the two prompt models on the question text the profiler gives them
(the previous n-gram complexity model as a reference, the shipped one alone, then
complexity + task type as the profiler calls them, sharing one featurization); `--router
DIR` adds a fitted router (`gateway router fit`) in the complexity model's place.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from gateway.classify.complexity import ComplexityModel
from gateway.classify.complexity_encoder import EncoderComplexityModel
from gateway.classify.presidio import PresidioFinder, presidio_config
from gateway.classify.profiler import question_text
from gateway.classify.router_model import RouterModel
from gateway.classify.standard import standard_classifier
from gateway.classify.task_type import TaskModel
from gateway.classify.tokens import count_text
from gateway.types import Endpoint, RouteRequest

THRESHOLDS = (8192 - 256, 32768 - 256, 128000 - 256)
SIZES = (200, 2_000, 32_000, 128_000)
SOURCE_FILES = ("README.md", "gateway/routing/service.py", "gateway/policy/engine.py")
CHAT_FILES = ("self_instruct_user_oriented.jsonl", "alpaca_eval_oasst_hh_tasks.jsonl",
              "arena_hard_v01_tasks.jsonl")
SPRINKLE = ("Contact me at jane.roe@example.org or +44 20 7946 0958 about invoice 4471. ",
            "Server 10.20.30.40 logged the failure at 03:14. ")


def corpus(kind: str = "code") -> str:
    """`code`: the project's README and source (identifiers, numbers, capitalised words: the
    scanner's hard case); `chat`: real users' requests (Self-Instruct's user-oriented tasks,
    OpenAssistant/HH questions, Arena-Hard v0.1), one after another. Both with the sprinkled
    contact details."""
    root = Path(__file__).resolve().parents[1]
    if kind == "chat":
        folder = root / "training" / "task_types"
        parts = ["\n\n".join(json.loads(line)["prompt"]
                              for line in (folder / name).read_text().splitlines() if line)
                 for name in CHAT_FILES]
    else:
        parts = [(root / f).read_text() for f in SOURCE_FILES]
    return "\n".join(p + SPRINKLE[i % 2] for i, p in enumerate(parts))


def prompt_of(tokens: int, base: str, salt: int, vary: bool = False) -> str:
    """`tokens` of `base` behind a salt; with `vary`, starting at a salt-dependent place in
    it (each prompt different text, not only a different first line)."""
    start = (salt * 7919) % len(base) if vary else 0
    rotated = base[start:] + "\n" + base[:start] if start else base
    text = f"[{salt}] "
    while count_text(text) < tokens:
        text += rotated
    # trim to the size (binary search on characters would be exact; proportional is close)
    ratio = tokens / count_text(text)
    return text[: int(len(text) * ratio)]


def p99(samples: list[float]) -> float:
    """Nearest-rank 99th percentile: with 300 samples, the 297th smallest (three above it)."""
    ordered = sorted(samples)
    return ordered[math.ceil(0.99 * len(ordered)) - 1]


async def measure(
    calls: int, large_calls: int, sizes: tuple[int, ...], presidio: bool, kind: str = "code",
    vary: bool = False,
) -> list[tuple[int, str, float, float]]:
    pool = ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn"))
    extra = PresidioFinder.in_processes(presidio_config("", 0.4, ""), 2) if presidio else None
    if extra is not None:
        await extra.warm()
    # As gateway/assembly/classification.py builds it.
    classifier = standard_classifier(pool, parallelism=2, extra=extra)
    base = corpus(kind)
    rows = []
    try:
        await classifier.profile(RouteRequest("w", Endpoint.CHAT, "m", {
            "messages": [{"role": "user", "content": prompt_of(40_000, base, 0)}]}), THRESHOLDS)
        # As the gateway does once it has started (app.py): what lives as long as the
        # process (models, tables) leaves the cyclic collector's view.
        gc.collect()
        gc.freeze()
        for size in sizes:
            n = calls if size <= 2_000 else large_calls
            prompts = [prompt_of(size, base, i, vary) for i in range(n)]
            for label in ("first sight", "repeated"):
                samples = []
                for text in prompts:
                    request = RouteRequest("r", Endpoint.CHAT, "m", {
                        "messages": [{"role": "system", "content": "You are helpful."},
                                     {"role": "user", "content": text}]})
                    start = time.perf_counter()
                    await classifier.profile(request, THRESHOLDS)
                    samples.append((time.perf_counter() - start) * 1000)
                rows.append((size, label, statistics.median(samples), p99(samples)))
    finally:
        pool.shutdown()
        if extra is not None:
            extra.close()
    return rows


def measure_models(calls: int, sizes: tuple[int, ...], router_dir: Path | None = None,
                   kind: str = "code", vary: bool = False,
                   ) -> list[tuple[int, str, float, float]]:
    """The complexity and task models alone, on fresh prompts (no feature reuse between
    prompts: each text is new, as each request's is); with `router_dir`, also a fitted router
    in place of the complexity model, as a policy's `router:` runs it."""
    complexity, task = EncoderComplexityModel.load(), TaskModel.load()
    # The previous shipped model (n-grams only) is the same-run reference.
    scorer: dict[str, ComplexityModel | EncoderComplexityModel | RouterModel] = {
        "n-gram (previous)": ComplexityModel.load(), "complexity": complexity,
        "complexity+task": complexity}
    if router_dir is not None:
        scorer["router+task"] = RouterModel.load(router_dir)
    base = corpus(kind)
    rows = []
    for size in sizes:
        prompts = [prompt_of(size, base, i, vary) for i in range(calls)]
        for label, model in scorer.items():
            samples = []
            for text in prompts:
                # A new str each time, as each request's question is a new object.
                question = question_text(Endpoint.COMPLETIONS, {"prompt": text + " "})
                start = time.perf_counter()
                model.p_strong(question)
                if label.endswith("+task"):
                    task.assess(question)
                samples.append((time.perf_counter() - start) * 1000)
            rows.append((size, label, statistics.median(samples), p99(samples)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="samples at 200 and 2K tokens")
    parser.add_argument("--large-calls", type=int, default=300,
                        help="samples at 32K and 128K tokens (distinct prompts, ~0.5 MB each)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="prompt sizes in tokens, comma-separated")
    parser.add_argument("--presidio", action="store_true",
                        help="with the optional Presidio second opinion")
    parser.add_argument("--models", action="store_true",
                        help="time only the complexity and task-type models")
    parser.add_argument("--router", type=Path, default=None,
                        help="with --models: also time this fitted router (a router fit DIR)")
    parser.add_argument("--corpus", choices=("code", "chat"), default="code",
                        help="the text prompts are cut from (see corpus())")
    parser.add_argument("--vary", action="store_true",
                        help="each prompt cut from a different place in the corpus (by default"
                             " all are its start behind a different first line)")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if args.models:
        rows = measure_models(max(20, min(args.calls, 5000)), sizes, args.router, args.corpus,
                              args.vary)
    else:
        rows = asyncio.run(measure(max(20, min(args.calls, 5000)),
                                   max(20, min(args.large_calls, 1000)), sizes, args.presidio,
                                   args.corpus, args.vary))
    print(f"{'prompt tokens':>13}  {'what':<16} {'p50 ms':>8} {'p99 ms':>8}")
    for size, label, p50, p99 in rows:
        print(f"{size:>13,}  {label:<16} {p50:>8.3f} {p99:>8.3f}")


if __name__ == "__main__":
    main()
