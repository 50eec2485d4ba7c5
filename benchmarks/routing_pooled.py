"""Pools several runs of benchmarks/routing.py (one `--json` file per seed) so a comparison of
tail latencies rests on more than one run's three worst requests.

Per load level and strategy: the requests of every run together (p50, p99, share over the
SLO target), spill-over share and cost, preemptions, and the range of the per-backend
prediction ratios. Each strategy's p99 is compared with a reference strategy's (default the
plain load-aware router) by a paired bootstrap over runs: every draw resamples, within each
seed, that seed's requests of both strategies, so a draw keeps the pairing by seed.

    python benchmarks/routing.py --loads 80 --strategies load_aware load_aware_slo \
        --duration 30 --warmup 3 --capacity 28.9 --seed 1 --json runs/s1.json   # seeds 1..N
    python benchmarks/routing_pooled.py runs/s*.json
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import orjson
from routing_report import _ms, percentile

REFERENCE = "load_aware + spill"
SLO_S = 0.5  # routing_fleet.SLO_TTFT_MS: the target of the SLO variant and the over-target share


@dataclass(slots=True)
class Pool:
    """One (load, strategy) over every run given: TTFTs by seed, and the runs' own figures."""

    ttfts: dict[int, list[float]]
    requests: int = 0
    spilled: float = 0.0  # spilled requests (share × ok), summed over runs
    ok: int = 0
    cost_usd: float = 0.0  # $ per 1k × requests / 1000, summed
    preemptions: int = 0
    ratios: list[float] | None = None  # per self-hosted backend medians, every run


def _ttft(value: float | None) -> float:
    return math.inf if value is None else value


def load(paths: list[Path]) -> dict[tuple[int, str], Pool]:
    pools: dict[tuple[int, str], Pool] = {}
    for seed_index, path in enumerate(paths):
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise SystemExit(f"{path}: not a routing.py --json file ({exc})") from None
        for run in data["runs"]:
            if not run.get("ttfts_s"):
                raise SystemExit(f"{path}: runs carry no ttfts_s (written by an older routing.py)")
            pool = pools.setdefault((run["load_pct"], run["strategy"]),
                                    Pool(ttfts=defaultdict(list), ratios=[]))
            pool.ttfts[seed_index].extend(_ttft(t) for t in run["ttfts_s"])
            pool.requests += run["requests"]
            pool.ok += run["ok"]
            pool.spilled += run["spill_share"] * run["ok"]
            pool.cost_usd += run["cost_per_1k_usd"] * run["requests"] / 1000
            pool.preemptions += sum(run["preemptions"].values())
            diagnosis = run.get("diagnosis") or {}
            assert pool.ratios is not None
            pool.ratios.extend((diagnosis.get("predicted_ttft_ratio_by_backend") or {}).values())
    return pools


def p99_difference(a: Pool, b: Pool, draws: int, rng: random.Random) -> tuple[float, float, float]:
    """p99(a) − p99(b) over all requests, and its 90 % interval: each draw resamples every
    seed's requests of a and of b with replacement (seeds present in both only)."""
    seeds = sorted(set(a.ttfts) & set(b.ttfts))
    whole_a = [t for s in seeds for t in a.ttfts[s]]
    whole_b = [t for s in seeds for t in b.ttfts[s]]
    point = percentile(whole_a, 99) - percentile(whole_b, 99)
    diffs = []
    for _ in range(draws):
        draw_a = [t for s in seeds for t in rng.choices(a.ttfts[s], k=len(a.ttfts[s]))]
        draw_b = [t for s in seeds for t in rng.choices(b.ttfts[s], k=len(b.ttfts[s]))]
        diffs.append(percentile(draw_a, 99) - percentile(draw_b, 99))
    diffs.sort()
    return point, diffs[int(0.05 * draws)], diffs[int(0.95 * draws) - 1]


def table(pools: dict[tuple[int, str], Pool], reference: str, draws: int, seed: int) -> str:
    rng = random.Random(seed)
    rows = [
        "| load | strategy | runs | requests | TTFT p50 ms | TTFT p99 ms | p99 − reference ms "
        f"[90 % CI] | > {SLO_S * 1000:.0f} ms | spill-over | $ per 1,000 req | preemptions | "
        "pred ÷ measured per backend, range |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for (load_pct, strategy), pool in sorted(pools.items()):
        everything = [t for values in pool.ttfts.values() for t in values]
        ref = pools.get((load_pct, reference))
        if ref is None or strategy == reference:
            versus = "–"
        else:
            point, low, high = p99_difference(pool, ref, draws, rng)
            versus = f"{point * 1000:+,.0f} [{low * 1000:+,.0f}, {high * 1000:+,.0f}]"
        over = sum(1 for t in everything if t > SLO_S) / len(everything)
        ratios = pool.ratios or []
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else "–"
        rows.append(
            f"| {load_pct} % | {strategy} | {len(pool.ttfts)} | {pool.requests} | "
            f"{_ms(statistics.median(everything))} | {_ms(percentile(everything, 99))} | "
            f"{versus} | {over * 100:.1f} % | {pool.spilled / max(1, pool.ok) * 100:.1f} % | "
            f"{pool.cost_usd / max(1, pool.requests) * 1000:.3f} | {pool.preemptions} | {spread} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="routing.py --json files, one per seed")
    parser.add_argument("--reference", default=REFERENCE, help=f"default: {REFERENCE}")
    parser.add_argument("--draws", type=int, default=2000, help="bootstrap draws")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's random seed")
    args = parser.parse_args(argv)
    print(table(load(args.runs), args.reference, args.draws, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
