"""The SQL of the rollup reports: cost, savings and the per-backend sums economics needs, read
from audit_daily, audit_latency and backend_busy_minutes (never the log itself, so months of
traffic answer in milliseconds). One async function per question, each returning typed rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Float, and_, case, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from gateway.audit.rollup import ALL_TENANTS
from gateway.db.audit_tables import audit_daily, audit_latency, backend_busy_minutes
from gateway.reports.periods import Period

SELF_HOSTED = "self_hosted"


class Dimension(StrEnum):
    TENANT = "tenant"
    MODEL = "model"
    BACKEND = "backend"
    RULE = "rule"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class RollupQuery:
    period: Period
    tenant_id: str | None = None  # None: every tenant
    by: Dimension = Dimension.TENANT


@dataclass(frozen=True, slots=True)
class CostLine:
    key: str  # the dimension's value: tenant name, model, backend, rule or ISO day
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_micro_usd: int


@dataclass(frozen=True, slots=True)
class SavingsLine:
    key: str
    requests: int
    cost_micro_usd: int
    baseline_cost_micro_usd: int
    self_hosted_requests: int
    api_requests: int  # served by a backend outside self_hosted
    self_hosted_tokens: int
    api_tokens: int
    sensitive: int
    sensitive_external: int
    redacted: int


@dataclass(frozen=True, slots=True)
class BackendSums:
    backend: str
    zone: str
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_micro_usd: int
    decode_s_sum: float
    kv_hit_sum: float
    kv_hit_count: int


def _total(column: Any) -> ColumnElement[int]:
    # Postgres sums bigints as numeric: cast back so every dialect hands out ints.
    return cast(func.coalesce(func.sum(column), 0), BigInteger)


def _fsum(column: Any) -> ColumnElement[float]:
    return cast(func.coalesce(func.sum(column), 0.0), Float)


def _where(query: RollupQuery, table: Any) -> list[ColumnElement[bool]]:
    first, last = query.period.days()
    clauses = [table.c.day >= first, table.c.day <= last]
    if query.tenant_id is not None:
        clauses.append(table.c.tenant_id == query.tenant_id)
    return clauses


def _key_column(by: Dimension) -> Any:
    return {
        Dimension.TENANT: audit_daily.c.tenant_id,
        Dimension.MODEL: audit_daily.c.requested_model,
        Dimension.BACKEND: audit_daily.c.backend,
        Dimension.RULE: audit_daily.c.rule,
        Dimension.DAY: audit_daily.c.day,
    }[by]


def _label(by: Dimension, row: Any) -> str:
    if by is Dimension.TENANT:
        return str(row.label)  # the name on its rows (ids group; names are for people)
    if by is Dimension.DAY:
        value = row.key
        return value.isoformat() if isinstance(value, date) else str(value)
    return str(row.key)


async def cost_lines(conn: AsyncConnection, query: RollupQuery) -> list[CostLine]:
    key = _key_column(query.by)
    d = audit_daily.c
    stmt = (
        select(key.label("key"), func.max(d.tenant).label("label"),
               _total(d.requests).label("requests"), _total(d.errors).label("errors"),
               _total(d.prompt_tokens).label("prompt_tokens"),
               _total(d.completion_tokens).label("completion_tokens"),
               _total(d.cached_tokens).label("cached_tokens"),
               _total(d.cost_micro_usd).label("cost_micro_usd"))
        .where(*_where(query, audit_daily))
        .group_by(key)
        .order_by(key)
    )
    return [
        CostLine(_label(query.by, r), r.requests, r.errors, r.prompt_tokens,
                 r.completion_tokens, r.cached_tokens, r.cost_micro_usd)
        for r in await conn.execute(stmt)
    ]


async def savings_lines(conn: AsyncConnection, query: RollupQuery) -> list[SavingsLine]:
    key = _key_column(query.by)
    d = audit_daily.c
    home = d.zone == SELF_HOSTED
    away = and_(d.zone != SELF_HOSTED, d.zone != "")
    tokens = d.prompt_tokens + d.completion_tokens
    stmt = (
        select(key.label("key"), func.max(d.tenant).label("label"),
               _total(d.requests).label("requests"),
               _total(d.cost_micro_usd).label("cost"),
               _total(d.baseline_cost_micro_usd).label("baseline"),
               _total(case((home, d.requests), else_=0)).label("home_requests"),
               _total(case((away, d.requests), else_=0)).label("api_requests"),
               _total(case((home, tokens), else_=0)).label("home_tokens"),
               _total(case((away, tokens), else_=0)).label("api_tokens"),
               _total(d.sensitive).label("sensitive"),
               _total(d.sensitive_external).label("sensitive_external"),
               _total(d.redacted).label("redacted"))
        .where(*_where(query, audit_daily))
        .group_by(key)
        .order_by(key)
    )
    return [
        SavingsLine(_label(query.by, r), r.requests, r.cost, r.baseline, r.home_requests,
                    r.api_requests, r.home_tokens, r.api_tokens, r.sensitive,
                    r.sensitive_external, r.redacted)
        for r in await conn.execute(stmt)
    ]


async def backend_sums(conn: AsyncConnection, query: RollupQuery) -> list[BackendSums]:
    d = audit_daily.c
    stmt = (
        select(d.backend, func.max(d.zone).label("zone"),
               _total(d.requests).label("requests"), _total(d.errors).label("errors"),
               _total(d.prompt_tokens).label("prompt_tokens"),
               _total(d.completion_tokens).label("completion_tokens"),
               _total(d.cached_tokens).label("cached_tokens"),
               _total(d.cost_micro_usd).label("cost"),
               _fsum(d.decode_s_sum).label("decode_s"),
               _fsum(d.kv_hit_sum).label("kv_hit_sum"),
               _total(d.kv_hit_count).label("kv_hit_count"))
        .where(*_where(query, audit_daily), d.backend != "")
        .group_by(d.backend)
        .order_by(d.backend)
    )
    return [
        BackendSums(r.backend, r.zone, r.requests, r.errors, r.prompt_tokens,
                    r.completion_tokens, r.cached_tokens, r.cost, r.decode_s, r.kv_hit_sum,
                    r.kv_hit_count)
        for r in await conn.execute(stmt)
    ]


Histograms = dict[tuple[str, str], dict[int, int]]  # (backend, "total" | "ttft") → bucket → n


async def latency_histograms(conn: AsyncConnection, query: RollupQuery) -> Histograms:
    a = audit_latency.c
    first, last = query.period.days()
    stmt = (
        select(a.backend, a.metric, a.bucket, _total(a.count).label("n"))
        .where(a.day >= first, a.day <= last,
               a.tenant_id == (query.tenant_id or ALL_TENANTS))
        .group_by(a.backend, a.metric, a.bucket)
    )
    found: Histograms = {}
    for r in await conn.execute(stmt):
        found.setdefault((r.backend, r.metric), {})[r.bucket] = r.n
    return found


async def busy_minutes(conn: AsyncConnection, start: datetime, end: datetime) -> dict[str, int]:
    """Minutes in [start, end) in which each backend served at least one request."""
    b = backend_busy_minutes.c
    stmt = (
        select(b.backend, func.count().label("n"))
        .where(b.minute >= start, b.minute < end)
        .group_by(b.backend)
    )
    return {r.backend: int(r.n) for r in await conn.execute(stmt)}
