"""All SQL the reports run on audit_log itself: a page of the audit report, and the route mix
by task and the traffic by entry point (both read from each row's trace, not the rollups, so
they suit days and weeks rather than years)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, and_, cast, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from gateway.audit.records import from_db, ts_datetime
from gateway.db.audit_tables import audit_log
from gateway.reports.audit_rows import AuditPage, AuditQuery, Cursor
from gateway.reports.entry_mix import EntryTraffic, entry_point_of
from gateway.reports.periods import Period
from gateway.reports.task_mix import NO_TASK, TaskRoute


def _before(cursor: Cursor) -> ColumnElement[bool]:
    """Strictly after the cursor in (ts, chain_id, seq) descending order. Spelled out rather
    than as a row comparison, with a plain `ts <=` bound the index can range-scan on."""
    c = audit_log.c
    ts = ts_datetime(cursor.ts_us)
    return and_(c.ts <= ts, or_(
        c.ts < ts,
        and_(c.ts == ts, or_(c.chain_id < cursor.chain_id,
                             and_(c.chain_id == cursor.chain_id, c.seq < cursor.seq))),
    ))


async def audit_page(conn: AsyncConnection, query: AuditQuery) -> AuditPage:
    c = audit_log.c
    clauses: list[ColumnElement[bool]] = [
        c.ts >= query.period.since, c.ts < query.period.until,
    ]
    filters: tuple[tuple[Any, str | None], ...] = (
        (c.tenant_id, query.tenant_id), (c.backend, query.backend),
        (c.requested_model, query.model), (c.rule, query.rule), (c.outcome, query.outcome),
    )
    clauses += [column == value for column, value in filters if value is not None]
    if query.cursor is not None:
        clauses.append(_before(query.cursor))
    stmt = (
        select(audit_log).where(*clauses)
        .order_by(c.ts.desc(), c.chain_id.desc(), c.seq.desc())
        .limit(query.limit + 1)  # one more than asked: whether another page exists
    )
    rows = [from_db(r._asdict()) for r in await conn.execute(stmt)]
    more = len(rows) > query.limit
    rows = rows[:query.limit]
    last = rows[-1] if more else None
    return AuditPage(rows, Cursor(last["ts"], last["chain_id"], last["seq"]) if last else None)


async def task_routes(conn: AsyncConnection, period: Period,
                      tenant_id: str | None = None) -> list[TaskRoute]:
    a = audit_log.c
    # JSON field access renders per dialect (->> on Postgres, JSON_EXTRACT on SQLite).
    task = a.trace["task"].as_string()
    query = (
        select(task.label("task"), a.backend, a.zone, func.count().label("requests"),
               func.coalesce(func.sum(a.p_strong), 0.0).label("p_sum"),
               func.count(a.p_strong).label("p_count"),
               cast(func.coalesce(func.sum(a.cost_micro_usd), 0), BigInteger).label("cost"))
        .where(a.ts >= period.since, a.ts < period.until)
        .group_by(task, a.backend, a.zone)
    )
    if tenant_id is not None:
        query = query.where(a.tenant_id == tenant_id)
    # NULL and "" backends (refused requests) are one group: merged here, not in SQL, so the
    # GROUP BY stays on plain columns on every dialect.
    merged: dict[tuple[str, str, str], list[float]] = {}
    for r in (await conn.execute(query)).all():
        sums = merged.setdefault((r.task or NO_TASK, r.backend or "", r.zone or ""),
                                 [0, 0.0, 0, 0])
        for i, value in enumerate((r.requests, r.p_sum, r.p_count, r.cost)):
            sums[i] += value
    return [TaskRoute(task, backend, zone, int(n), float(p), int(pn), int(cost))
            for (task, backend, zone), (n, p, pn, cost) in merged.items()]


async def entry_traffic(conn: AsyncConnection, period: Period,
                        tenant_id: str | None = None) -> list[EntryTraffic]:
    a = audit_log.c
    api = a.trace["api"].as_string()  # ->> on Postgres, JSON_EXTRACT on SQLite
    total = func.count()
    errors = func.count().filter(a.status >= 400)  # as the daily rollups count them
    query = (
        select(api.label("api"), a.endpoint, total.label("requests"), errors.label("errors"),
               cast(func.coalesce(func.sum(a.prompt_tokens), 0), BigInteger).label("prompt"),
               cast(func.coalesce(func.sum(a.completion_tokens), 0), BigInteger).label("done"),
               cast(func.coalesce(func.sum(a.cost_micro_usd), 0), BigInteger).label("cost"))
        .where(a.ts >= period.since, a.ts < period.until)
        .group_by(api, a.endpoint)
    )
    if tenant_id is not None:
        query = query.where(a.tenant_id == tenant_id)
    merged: dict[str, list[int]] = {}
    for r in (await conn.execute(query)).all():
        sums = merged.setdefault(entry_point_of(r.api, r.endpoint), [0, 0, 0, 0, 0])
        for i, value in enumerate((r.requests, r.errors, r.prompt, r.done, r.cost)):
            sums[i] += int(value)
    return [EntryTraffic(name, *sums) for name, sums in merged.items()]
