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
    in_flight: tuple[float, ...]  # mean requests in flight, per minute with traffic
    peak_qps: float  # the busiest minute's arrivals ÷ 60
    peak_output_tokens_per_s: float  # the busiest minute's finished completion tokens ÷ 60
    prompt_tokens_p90: int
    output_tokens_p90: int
    requests: int
    baseline_micro_usd: int  # the same requests on the baseline

    @property
    def peak_sessions(self) -> float:
        return max(self.in_flight, default=0.0)


async def observed_loads(conn: AsyncConnection, start: datetime, end: datetime,
                         backends: list[str] | None = None) -> list[ObservedLoad]:
    lm = backend_load_minutes.c
    where = [lm.minute >= start, lm.minute < end]
    if backends is not None:
        where.append(lm.backend.in_(backends))
    per_minute: dict[str, list[float]] = {}
    peaks: dict[str, tuple[float, float]] = {}
    for r in await conn.execute(select(lm.backend, lm.requests, lm.request_s,
                                       lm.completion_tokens).where(*where)):
        per_minute.setdefault(r.backend, []).append(r.request_s / 60)
        qps, tok = peaks.get(r.backend, (0.0, 0.0))
        peaks[r.backend] = (max(qps, r.requests / 60), max(tok, r.completion_tokens / 60))
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
