"""The SQL of the rollup reports: the usage groups the cost model prices, the per-backend sums
economics needs, latency histograms and busy minutes, read
from audit_daily, audit_latency and backend_busy_minutes (never the log itself, so months of
traffic answer in milliseconds). One async function per question, each returning typed rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Float, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from gateway.audit.rollup import ALL_TENANTS
from gateway.db.audit_tables import audit_daily, audit_latency
from gateway.reports.cost_model import UsageGroup
from gateway.reports.periods import Period


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
    decode_tokens: int
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


async def usage_groups(conn: AsyncConnection, period: Period) -> list[UsageGroup]:
    """Every audit_daily row of the range's days, for every tenant: GPU cost is shared among
    everyone's requests, so even one tenant's share needs them all."""
    first, last = period.days()
    d = audit_daily.c
    stmt = select(
        d.day, d.tenant_id, d.tenant, d.requested_model, d.backend, d.rule, d.zone, d.requests,
        d.errors, d.prompt_tokens, d.completion_tokens, d.cached_tokens, d.cost_micro_usd,
        d.baseline_cost_micro_usd, d.sensitive, d.sensitive_external, d.redacted,
        d.sensitive_approved,
    ).where(d.day >= first, d.day <= last)
    return [
        UsageGroup(
            r.day if isinstance(r.day, date) else date.fromisoformat(str(r.day)), r.tenant_id,
            r.tenant, r.requested_model, r.backend, r.rule, r.zone, r.requests, r.errors,
            r.prompt_tokens, r.completion_tokens, r.cached_tokens, r.cost_micro_usd,
            r.baseline_cost_micro_usd, r.sensitive, r.sensitive_external, r.redacted,
            r.sensitive_approved,
        )
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
               _total(d.decode_tokens).label("decode_tokens"),
               _fsum(d.kv_hit_sum).label("kv_hit_sum"),
               _total(d.kv_hit_count).label("kv_hit_count"))
        .where(*_where(query, audit_daily), d.backend != "")
        .group_by(d.backend)
        .order_by(d.backend)
    )
    return [
        BackendSums(r.backend, r.zone, r.requests, r.errors, r.prompt_tokens,
                    r.completion_tokens, r.cached_tokens, r.cost, r.decode_s, r.decode_tokens,
                    r.kv_hit_sum,
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
