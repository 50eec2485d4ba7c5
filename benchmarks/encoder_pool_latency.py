"""How long does the accurate classifier mode make a request wait? p50/p99 latency per request
through EncoderPool (the full int8 MiniLM in worker processes, micro-batched) at 1 and 64
concurrent requests, prompts of ~200 and ~2,000 tokens, beside the static encoder's cost per
prompt measured in the same run.

    python benchmarks/encoder_pool_latency.py [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import numpy as np

from gateway.classify.encoder_pool import EncoderPool, PoolLimits
from gateway.classify.static_encoder import StaticEncoder

SENTENCES = [
    "Design a rate limiter for a multi-tenant API gateway that keeps per-tenant fairness.",
    "Explain the trade-offs between optimistic and pessimistic locking in a busy database.",
    "Our quarterly report shows revenue growth in three regions and a decline in one.",
    "Write a function that merges overlapping intervals and state its time complexity.",
    "The customer asked why the invoice total differs from the quoted price last month.",
    "Summarise the main arguments of the paper and list the experiments that support them.",
]


def prompt(tokens: int, seed: int) -> str:
    """About `tokens` BERT tokens of varied English (a sentence is ~16 tokens)."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(SENTENCES), size=max(1, tokens // 16))
    return f"Request {seed}. " + " ".join(SENTENCES[i] for i in picks)


def percentiles(samples_s: list[float]) -> tuple[float, float]:
    ms = np.array(samples_s) * 1e3
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


async def timed(pool: EncoderPool, text: str) -> float:
    start = time.perf_counter()
    await pool.encode(text)
    return time.perf_counter() - start


async def pool_latency(pool: EncoderPool, tokens: int, concurrency: int,
                       rounds: int) -> list[float]:
    samples: list[float] = []
    for r in range(rounds):
        texts = [prompt(tokens, 1000 * r + i) for i in range(max(concurrency, 16))]
        if concurrency == 1:
            for text in texts:
                samples.append(await timed(pool, text))
        else:
            samples += await asyncio.gather(*(timed(pool, t) for t in texts[:concurrency]))
    return samples


def static_latency(tokens: int, repeats: int) -> list[float]:
    encoder = StaticEncoder.load()
    texts = [prompt(tokens, i) for i in range(repeats)]
    encoder.encode(texts[0])
    samples = []
    for text in texts:
        start = time.perf_counter()
        encoder.encode(text)
        samples.append(time.perf_counter() - start)
    return samples


async def main(workers: int, rounds: int) -> None:
    rows: list[tuple[str, int, int, float, float]] = []
    limits = PoolLimits(max_in_flight=workers, batch_timeout_s=60.0)
    async with EncoderPool.processes(workers=workers, limits=limits) as pool:
        await pool.warm()
        for tokens in (200, 2000):
            for concurrency in (1, 64):
                samples = await pool_latency(pool, tokens, concurrency, rounds)
                rows.append((f"EncoderPool ({workers} workers)", tokens, concurrency,
                             *percentiles(samples)))
    for tokens in (200, 2000):
        rows.append(("StaticEncoder (in-process)", tokens, 1,
                     *percentiles(static_latency(tokens, 200))))
    print(f"{'path':<28} {'tokens':>6} {'concurrent':>10} {'p50 ms':>9} {'p99 ms':>9}")
    for name, tokens, concurrency, p50, p99 in rows:
        print(f"{name:<28} {tokens:>6} {concurrency:>10} {p50:>9.2f} {p99:>9.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.workers, args.rounds))
