"""What the gateway saw each backend carry over a range, read from the load rollups (never
the audit rows): per-minute concurrency and arrivals, request sizes, throughput shown, and
what the same requests would have cost on the baseline (queried by load_repository.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.audit.rollup import bucket_tokens, percentile_bucket
from gateway.capacity.load_repository import (
    baseline_totals,
    busiest_minutes,
    in_flight_minutes,
    token_sizes,
)

P90 = 0.90


@dataclass(frozen=True, slots=True)
class ObservedLoad:
    backend: str
    minutes: int  # minutes in the range
    # Mean requests in flight in a minute (request-seconds ÷ 60, to the second) → how many
    # minutes with traffic had that load, lightest first.
    in_flight: tuple[tuple[float, int], ...]
    peak_qps: float  # the busiest minute's arrivals ÷ 60
    peak_output_tokens_per_s: float  # the busiest minute's finished completion tokens ÷ 60
    prompt_tokens_p90: int
    output_tokens_p90: int
    requests: int
    baseline_micro_usd: int  # the same requests on the baseline

    @property
    def mean_qps(self) -> float:
        """Arrivals per second over the whole range: what a break-even QPS (a sustained
        rate, priced by the month) compares with, not the busiest minute."""
        return self.requests / (self.minutes * 60) if self.minutes else 0.0

    @property
    def peak_sessions(self) -> float:
        return self.in_flight[-1][0] if self.in_flight else 0.0


async def observed_loads(conn: AsyncConnection, start: datetime, end: datetime,
                         backends: list[str] | None = None) -> list[ObservedLoad]:
    per_minute = await in_flight_minutes(conn, start, end, backends)
    peaks = await busiest_minutes(conn, start, end, backends)
    sizes = await token_sizes(conn, start, end)
    totals = await baseline_totals(conn, start, end)
    minutes = max(1, round((end - start).total_seconds() / 60))
    found = []
    for backend in sorted(per_minute):
        requests, baseline = totals.get(backend, (0, 0))
        found.append(ObservedLoad(
            backend, minutes, tuple(sorted(per_minute[backend])), *peaks[backend],
            _p90(sizes.get((backend, "prompt"), {})), _p90(sizes.get((backend, "output"), {})),
            requests, baseline,
        ))
    return found


def _p90(histogram: dict[int, int]) -> int:
    bucket = percentile_bucket(histogram, P90)
    return 0 if bucket is None else round(bucket_tokens(bucket))
