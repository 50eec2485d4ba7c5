"""What the gateway saw each backend carry over a range, read from the load rollups (never
the audit rows): per-minute concurrency and arrivals, request sizes, throughput shown, and
what the same requests would have cost on the baseline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import BigInteger, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from gateway.audit.rollup import bucket_tokens, percentile_bucket
from gateway.db.audit_tables import audit_daily
from gateway.db.deployment_tables import audit_token_sizes, backend_load_minutes

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
    lm = backend_load_minutes.c
    where = [lm.minute >= start, lm.minute < end]
    if backends is not None:
        where.append(lm.backend.in_(backends))
    # Two grouped scans: a month of minutes folds into a few hundred rows per backend.
    load = cast(func.round(lm.request_s), BigInteger)
    per_minute: dict[str, list[tuple[float, int]]] = {}
    for r in await conn.execute(select(lm.backend, load.label("seconds"), func.count().label("n"))
                                .where(*where).group_by(lm.backend, load)):
        per_minute.setdefault(r.backend, []).append((int(r.seconds) / 60, int(r.n)))
    peaks = {
        r.backend: (int(r.arrivals) / 60, int(r.finished) / 60)
        for r in await conn.execute(
            select(lm.backend, func.max(lm.requests).label("arrivals"),
                   func.max(lm.completion_tokens).label("finished"))
            .where(*where).group_by(lm.backend))
    }
    sizes = await _sizes(conn, start, end)
    totals = await _totals(conn, start, end)
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


async def _sizes(conn: AsyncConnection, start: datetime,
                 end: datetime) -> dict[tuple[str, str], dict[int, int]]:
    t = audit_token_sizes.c
    rows = await conn.execute(
        select(t.backend, t.metric, t.bucket, cast(func.sum(t.count), BigInteger).label("n"))
        .where(t.day >= start.date(), t.day <= end.date())
        .group_by(t.backend, t.metric, t.bucket))
    found: dict[tuple[str, str], dict[int, int]] = {}
    for r in rows:
        found.setdefault((r.backend, r.metric), {})[r.bucket] = int(r.n)
    return found


async def _totals(conn: AsyncConnection, start: datetime,
                  end: datetime) -> dict[str, tuple[int, int]]:
    d = audit_daily.c
    rows = await conn.execute(
        select(d.backend, cast(func.sum(d.requests), BigInteger).label("n"),
               cast(func.sum(d.baseline_cost_micro_usd), BigInteger).label("baseline"))
        .where(d.day >= start.date(), d.day <= end.date()).group_by(d.backend))
    return {r.backend: (int(r.n or 0), int(r.baseline or 0)) for r in rows}
