"""All SQL of the observed load: the load rollups (backend_load_minutes, audit_token_sizes) and
the daily sums a backend's baseline cost comes from, each a grouped scan, so a month of
minutes folds into a few hundred rows per backend."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from gateway.db.audit_tables import audit_daily
from gateway.db.deployment_tables import audit_token_sizes, backend_load_minutes


def _minutes(start: datetime, end: datetime,
             backends: list[str] | None) -> list[ColumnElement[bool]]:
    lm = backend_load_minutes.c
    where = [lm.minute >= start, lm.minute < end]
    if backends is not None:
        where.append(lm.backend.in_(backends))
    return where


async def in_flight_minutes(conn: AsyncConnection, start: datetime, end: datetime,
                            backends: list[str] | None) -> dict[str, list[tuple[float, int]]]:
    """Backend → (mean requests in flight in a minute, to the second; minutes with that load)."""
    lm = backend_load_minutes.c
    load = cast(func.round(lm.request_s), BigInteger)
    per_minute: dict[str, list[tuple[float, int]]] = {}
    for r in await conn.execute(select(lm.backend, load.label("seconds"), func.count().label("n"))
                                .where(*_minutes(start, end, backends))
                                .group_by(lm.backend, load)):
        per_minute.setdefault(r.backend, []).append((int(r.seconds) / 60, int(r.n)))
    return per_minute


async def busiest_minutes(conn: AsyncConnection, start: datetime, end: datetime,
                          backends: list[str] | None) -> dict[str, tuple[float, float]]:
    """Backend → (the busiest minute's arrivals ÷ 60, its finished completion tokens ÷ 60)."""
    lm = backend_load_minutes.c
    return {
        r.backend: (int(r.arrivals) / 60, int(r.finished) / 60)
        for r in await conn.execute(
            select(lm.backend, func.max(lm.requests).label("arrivals"),
                   func.max(lm.completion_tokens).label("finished"))
            .where(*_minutes(start, end, backends)).group_by(lm.backend))
    }


async def token_sizes(conn: AsyncConnection, start: datetime,
                      end: datetime) -> dict[tuple[str, str], dict[int, int]]:
    """(backend, "prompt" | "output") → size bucket → requests, over the range's days."""
    t = audit_token_sizes.c
    rows = await conn.execute(
        select(t.backend, t.metric, t.bucket, cast(func.sum(t.count), BigInteger).label("n"))
        .where(t.day >= start.date(), t.day <= end.date())
        .group_by(t.backend, t.metric, t.bucket))
    found: dict[tuple[str, str], dict[int, int]] = {}
    for r in rows:
        found.setdefault((r.backend, r.metric), {})[r.bucket] = int(r.n)
    return found


async def baseline_totals(conn: AsyncConnection, start: datetime,
                          end: datetime) -> dict[str, tuple[int, int]]:
    """Backend → (requests, what they would have cost on the baseline), over the range's days."""
    d = audit_daily.c
    rows = await conn.execute(
        select(d.backend, cast(func.sum(d.requests), BigInteger).label("n"),
               cast(func.sum(d.baseline_cost_micro_usd), BigInteger).label("baseline"))
        .where(d.day >= start.date(), d.day <= end.date()).group_by(d.backend))
    return {r.backend: (int(r.n or 0), int(r.baseline or 0)) for r in rows}


