"""The record of what self-hosted capacity the policy declared and when: each policy put in
force (at start-up and on every reload) is compared with the open spans, so a deployment is
paid from when it was first declared, through reloads that leave it as it was, until a policy
drops it or changes its price. All SQL of gpu_deployments lives here, and the reads of the busy
and load minutes that price a deployment's use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Date, and_, cast, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.db.audit_tables import backend_busy_minutes
from gateway.db.deployment_tables import backend_load_minutes, gpu_deployments

# Replicas declaring at once queue on this lock instead of opening two spans for one backend.
_LOCK_ID = 0x6777_6465_706C  # "gwdepl"


@dataclass(frozen=True, slots=True)
class DeclaredGpus:
    """A self-hosted deployment as the policy in force declares it."""

    backend: str
    hourly_micro_usd: int  # every GPU of the deployment, per hour
    gpu_count: int


@dataclass(frozen=True, slots=True)
class PaidSpan:
    """A time in which a deployment existed at one price: GPU-hours are paid over it."""

    backend: str
    since: datetime
    until: datetime | None  # None: still declared
    hourly_micro_usd: int
    gpu_count: int


class DeploymentLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def declare(self, declared: Sequence[DeclaredGpus], now: datetime) -> None:
        """Bring the open spans in line with a policy: unchanged deployments keep their span,
        changed ones close and reopen at `now`, dropped ones close at `now`."""
        wanted = {d.backend: d for d in declared}
        g = gpu_deployments.c
        async with self._engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                await conn.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _LOCK_ID})
            open_spans = (await conn.execute(
                select(g.backend, g.since, g.hourly_micro_usd, g.gpu_count)
                .where(g.until.is_(None))
            )).all()
            kept: set[str] = set()
            for span in open_spans:
                same = wanted.get(span.backend)
                if same is not None and (same.hourly_micro_usd, same.gpu_count) == (
                        span.hourly_micro_usd, span.gpu_count):
                    kept.add(span.backend)
                    continue
                await conn.execute(update(gpu_deployments).where(
                    g.backend == span.backend, g.since == span.since).values(until=now))
            fresh = [
                {"backend": d.backend, "since": now, "until": None,
                 "hourly_micro_usd": d.hourly_micro_usd, "gpu_count": d.gpu_count}
                for d in declared if d.backend not in kept
            ]
            if fresh:
                await conn.execute(gpu_deployments.insert(), fresh)


async def paid_spans(conn: AsyncConnection, start: datetime, end: datetime) -> list[PaidSpan]:
    """Spans overlapping [start, end), oldest first."""
    g = gpu_deployments.c
    rows = await conn.execute(
        select(g.backend, g.since, g.until, g.hourly_micro_usd, g.gpu_count)
        .where(g.since < end, or_(g.until.is_(None), g.until > start))
        .order_by(g.backend, g.since)
    )
    return [PaidSpan(r.backend, _aware(r.since), _aware(r.until) if r.until else None,
                     r.hourly_micro_usd, r.gpu_count) for r in rows]


async def recorded_backends(conn: AsyncConnection) -> set[str]:
    """Every backend the record has ever seen declared."""
    return {r.backend for r in await conn.execute(select(gpu_deployments.c.backend).distinct())}


async def first_traffic(conn: AsyncConnection, backends: Sequence[str]) -> dict[str, datetime]:
    """The first minute each backend served anything (one index probe per backend)."""
    b = backend_busy_minutes.c
    if not backends:
        return {}
    rows = await conn.execute(
        select(b.backend, func.min(b.minute).label("first"))
        .where(b.backend.in_(list(backends))).group_by(b.backend)
    )
    return {r.backend: _aware(r.first) for r in rows if r.first is not None}


async def busy_minutes_by_day(conn: AsyncConnection, spans: Sequence[PaidSpan],
                              start: datetime, end: datetime) -> dict[tuple[str, str], int]:
    """(backend, ISO day) → minutes with traffic inside the backend's paid spans and
    [start, end): only minutes that were paid for can be busy ones."""
    b = backend_busy_minutes.c
    found: dict[tuple[str, str], int] = {}
    for span in spans:
        low = max(span.since, start)
        high = min(span.until, end) if span.until else end
        if low >= high:
            continue
        day = _utc_day(conn, b.minute)
        rows = await conn.execute(
            select(day.label("day"), func.count().label("n"))
            .where(and_(b.backend == span.backend, b.minute >= low, b.minute < high))
            .group_by(day)
        )
        for r in rows:
            key = (span.backend, str(r.day)[:10])
            found[key] = found.get(key, 0) + int(r.n)
    return found


async def hourly_activity(conn: AsyncConnection, start: datetime, end: datetime
                          ) -> tuple[dict[tuple[str, datetime], int],
                                     dict[tuple[str, datetime], int]]:
    """(backend, UTC hour) → requests started, and → minutes with traffic, over [start, end).
    Read minute by minute and folded here: it serves ranges of a day or two (a young
    deployment's report page), a few thousand rows per backend."""
    lm, b = backend_load_minutes.c, backend_busy_minutes.c
    arrivals: dict[tuple[str, datetime], int] = {}
    for r in await conn.execute(select(lm.backend, lm.minute, lm.requests)
                                .where(lm.minute >= start, lm.minute < end)):
        key = (r.backend, _aware(r.minute).replace(minute=0, second=0, microsecond=0))
        arrivals[key] = arrivals.get(key, 0) + int(r.requests)
    busy: dict[tuple[str, datetime], int] = {}
    for r in await conn.execute(select(b.backend, b.minute)
                                .where(b.minute >= start, b.minute < end)):
        key = (r.backend, _aware(r.minute).replace(minute=0, second=0, microsecond=0))
        busy[key] = busy.get(key, 0) + 1
    return arrivals, busy


def _utc_day(conn: AsyncConnection, column: Any) -> Any:
    if conn.dialect.name == "postgresql":  # whatever the session's time zone says
        return cast(func.timezone("UTC", column), Date)
    return func.date(column)  # SQLite keeps UTC text


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes: every stored time is UTC.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
