"""The load a replay puts on each backend, before (as recorded) and after (as the new policy
would route it): per-minute arrivals and request-seconds, request sizes and baseline cost, so
the command can say how the GPUs each deployment needs would change. Each request keeps its
recorded duration on its new backend: the replay compares routes, not engine speeds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gateway.audit.records import Row
from gateway.audit.rollup import bucket_tokens, percentile_bucket, token_bucket

BEFORE, AFTER = "before", "after"
P90 = 0.90


@dataclass(slots=True)
class LoadTally:
    # (side, backend) → UTC minute (epoch seconds ÷ 60) → [arrivals, request-seconds, tokens]
    minutes: dict[tuple[str, str], dict[int, list[float]]] = field(default_factory=dict)
    sizes: dict[tuple[str, str, str], Counter[int]] = field(default_factory=dict)
    totals: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # requests, baseline

    def add(self, side: str, backend: str, row: Row) -> None:
        end = row["ts"] / 1_000_000
        begin = end - row["duration_s"]
        minutes = self.minutes.setdefault((side, backend), {})
        first, last = int(begin // 60), int(end // 60)
        minutes.setdefault(first, [0, 0.0, 0])[0] += 1
        minutes.setdefault(last, [0, 0.0, 0])[2] += row["completion_tokens"]
        for minute in range(first, last + 1):
            inside = min(end, (minute + 1) * 60) - max(begin, minute * 60)
            minutes.setdefault(minute, [0, 0.0, 0])[1] += max(0.0, inside)
        for metric, tokens in (("prompt", row["prompt_tokens"]),
                               ("output", row["completion_tokens"])):
            self.sizes.setdefault((side, backend, metric), Counter())[token_bucket(tokens)] += 1
        totals = self.totals.setdefault((side, backend), [0, 0])
        totals[0] += 1
        totals[1] += row["baseline_cost_micro_usd"] or 0


@dataclass(frozen=True, slots=True)
class ReplayLoad:
    side: str  # BEFORE or AFTER
    backend: str
    in_flight: tuple[tuple[float, int], ...]  # mean in flight in a minute → minutes, ascending
    peak_qps: float
    peak_output_tokens_per_s: float
    prompt_tokens_p90: int
    output_tokens_p90: int
    requests: int
    baseline_micro_usd: int


def _p90(histogram: Counter[int] | None) -> int:
    bucket = percentile_bucket(dict(histogram or {}), P90)
    return 0 if bucket is None else round(bucket_tokens(bucket))


def replay_loads(tally: LoadTally) -> tuple[ReplayLoad, ...]:
    found = []
    for (side, backend), minutes in sorted(tally.minutes.items()):
        load = Counter(round(v[1]) / 60 for v in minutes.values())
        requests, baseline = tally.totals.get((side, backend), [0, 0])
        found.append(ReplayLoad(
            side, backend, tuple(sorted(load.items())),
            max(v[0] for v in minutes.values()) / 60, max(v[2] for v in minutes.values()) / 60,
            _p90(tally.sizes.get((side, backend, "prompt"))),
            _p90(tally.sizes.get((side, backend, "output"))), requests, baseline,
        ))
    return tuple(found)
