"""What the HTML report page shows, read from the daily rollups (never the raw log): cost per
day by backend against the baseline, route mix, latency percentiles, savings per tenant."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.rollup import percentile
from gateway.db.audit_tables import audit_daily
from gateway.reports.periods import Period
from gateway.reports.queries import RollupQuery, latency_histograms

DEFAULT_DAYS = 30
# One bar per day: beyond two years the bars are thinner than a pixel and say nothing.
MAX_DAYS = 731
QUANTILES = (0.50, 0.95, 0.99)
SELF_HOSTED = "self_hosted"


class RangeError(ValueError):
    """A report range that cannot be drawn (reversed, or too long)."""


@dataclass(frozen=True, slots=True)
class ReportRange:
    since: date  # inclusive, UTC days
    until: date  # inclusive
    tenant: str | None = None  # a tenant's name or id; None for all

    @property
    def days(self) -> list[date]:
        return [self.since + timedelta(days=i) for i in range((self.until - self.since).days + 1)]


def report_range(
    since: date | None, until: date | None, tenant: str | None, *, today: date | None = None
) -> ReportRange:
    """The range asked for, defaulting to the last 30 UTC days up to today."""
    until = until or today or datetime.now(UTC).date()
    since = since or until - timedelta(days=DEFAULT_DAYS - 1)
    if since > until:
        raise RangeError(f"since ({since}) is after until ({until})")
    if (until - since).days + 1 > MAX_DAYS:
        raise RangeError(f"the range is longer than {MAX_DAYS} days")
    return ReportRange(since, until, tenant or None)


@dataclass(frozen=True, slots=True)
class DailyTotals:
    """One (day, tenant, backend, rule, zone) group of audit_daily, summed over models."""

    day: date
    tenant_id: str
    tenant: str
    backend: str  # "" when nothing was chosen
    rule: str  # "" when no rule fired
    zone: str
    requests: int
    errors: int
    cost_micro_usd: int
    baseline_cost_micro_usd: int
    sensitive: int
    sensitive_external: int


@dataclass(frozen=True, slots=True)
class Share:
    name: str
    requests: int


@dataclass(frozen=True, slots=True)
class Latency:
    backend: str
    total_s: tuple[float | None, ...]  # p50, p95, p99
    ttft_s: tuple[float | None, ...]


@dataclass(frozen=True, slots=True)
class TenantSavings:
    tenant: str
    requests: int
    cost_micro_usd: int
    baseline_cost_micro_usd: int


@dataclass(frozen=True, slots=True)
class PageData:
    range: ReportRange
    generated_at: datetime
    days: tuple[date, ...]
    backends: tuple[str, ...]  # by cost, then requests: the colour order of every chart
    cost_by_day: dict[str, tuple[int, ...]]  # backend → micro-USD per day
    baseline_by_day: tuple[int, ...]
    backend_mix: tuple[Share, ...]
    rule_mix: tuple[Share, ...]
    latency: tuple[Latency, ...]
    tenants: tuple[TenantSavings, ...]
    requests: int
    errors: int
    cost_micro_usd: int
    baseline_cost_micro_usd: int
    self_hosted_requests: int
    sensitive: int
    sensitive_kept_home: int

    @property
    def empty(self) -> bool:
        return self.requests == 0


def build_page(
    rng: ReportRange,
    daily: Iterable[DailyTotals],
    histograms: dict[tuple[str, str], dict[int, int]],
    generated_at: datetime,
) -> PageData:
    """Pure: fold the rollup groups into what each chart draws."""
    days = tuple(rng.days)
    index = {d: i for i, d in enumerate(days)}
    cost: dict[str, list[int]] = {}
    baseline = [0] * len(days)
    by_backend: dict[str, int] = {}
    by_rule: dict[str, int] = {}
    tenants: dict[str, list[Any]] = {}  # id → [name, requests, cost, baseline]
    totals = dict.fromkeys(
        ("requests", "errors", "cost", "baseline", "home", "sensitive", "kept"), 0
    )
    for g in daily:
        i = index.get(g.day)
        if i is None:
            continue
        backend = g.backend or "(none chosen)"
        cost.setdefault(backend, [0] * len(days))[i] += g.cost_micro_usd
        baseline[i] += g.baseline_cost_micro_usd
        by_backend[backend] = by_backend.get(backend, 0) + g.requests
        rule = g.rule or "(no rule)"
        by_rule[rule] = by_rule.get(rule, 0) + g.requests
        entry = tenants.setdefault(g.tenant_id, [g.tenant, 0, 0, 0])
        entry[1] += g.requests
        entry[2] += g.cost_micro_usd
        entry[3] += g.baseline_cost_micro_usd
        totals["requests"] += g.requests
        totals["errors"] += g.errors
        totals["cost"] += g.cost_micro_usd
        totals["baseline"] += g.baseline_cost_micro_usd
        totals["home"] += g.requests if g.zone == SELF_HOSTED else 0
        totals["sensitive"] += g.sensitive
        totals["kept"] += g.sensitive - g.sensitive_external
    order = sorted(by_backend, key=lambda b: (-sum(cost[b]), -by_backend[b], b))
    latency = tuple(
        Latency(
            backend,
            tuple(percentile(histograms.get((backend, "total"), {}), q) for q in QUANTILES),
            tuple(percentile(histograms.get((backend, "ttft"), {}), q) for q in QUANTILES),
        )
        for backend in order
        if (backend, "total") in histograms or (backend, "ttft") in histograms
    )
    return PageData(
        range=rng,
        generated_at=generated_at,
        days=days,
        backends=tuple(order),
        cost_by_day={b: tuple(cost[b]) for b in order},
        baseline_by_day=tuple(baseline),
        backend_mix=_shares(by_backend),
        rule_mix=_shares(by_rule),
        latency=latency,
        tenants=tuple(sorted(
            (TenantSavings(name, n, c, b) for name, n, c, b in tenants.values()),
            key=lambda t: (-t.baseline_cost_micro_usd, -t.cost_micro_usd, t.tenant),
        )),
        requests=totals["requests"],
        errors=totals["errors"],
        cost_micro_usd=totals["cost"],
        baseline_cost_micro_usd=totals["baseline"],
        self_hosted_requests=totals["home"],
        sensitive=totals["sensitive"],
        sensitive_kept_home=totals["kept"],
    )


def _shares(counts: dict[str, int]) -> tuple[Share, ...]:
    return tuple(Share(n, c) for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


async def load_page(engine: AsyncEngine, rng: ReportRange) -> PageData:
    """Two grouped reads of the rollups; their size grows with days × backends, not requests."""
    d = audit_daily.c
    in_range = [d.day >= rng.since, d.day <= rng.until]
    if rng.tenant is not None:
        in_range.append(or_(d.tenant == rng.tenant, d.tenant_id == rng.tenant))
    daily_query = (
        select(
            d.day, d.tenant_id, func.max(d.tenant).label("tenant"), d.backend, d.rule, d.zone,
            *(func.sum(c).label(c.name) for c in (
                d.requests, d.errors, d.cost_micro_usd, d.baseline_cost_micro_usd,
                d.sensitive, d.sensitive_external,
            )),
        )
        .where(*in_range)
        .group_by(d.day, d.tenant_id, d.backend, d.rule, d.zone)
    )
    async with engine.connect() as conn:
        daily = [_daily(r._asdict()) for r in await conn.execute(daily_query)]
        tenant_ids = sorted({g.tenant_id for g in daily})
        histograms = await _histograms(conn, rng, tenant_ids) if daily else {}
    return build_page(rng, daily, histograms, datetime.now(UTC))


async def _histograms(
    conn: Any, rng: ReportRange, tenant_ids: Sequence[str]
) -> dict[tuple[str, str], dict[int, int]]:
    """The same histograms the economics report reads, for the page's days and tenant (a
    tenant named on the page matched rows of exactly one id)."""
    start = datetime(rng.since.year, rng.since.month, rng.since.day, tzinfo=UTC)
    end = datetime(rng.until.year, rng.until.month, rng.until.day, tzinfo=UTC)
    period = Period(start, end + timedelta(days=1))
    tenant_id = tenant_ids[0] if rng.tenant is not None and tenant_ids else None
    return await latency_histograms(conn, RollupQuery(period, tenant_id=tenant_id))


def _daily(r: dict[str, Any]) -> DailyTotals:
    day = r["day"]
    if isinstance(day, str):  # SQLite hands dates back as text under GROUP BY
        day = date.fromisoformat(day)
    return DailyTotals(
        day=day, tenant_id=r["tenant_id"], tenant=r["tenant"], backend=r["backend"],
        rule=r["rule"], zone=r["zone"],
        **{k: int(r[k] or 0) for k in (
            "requests", "errors", "cost_micro_usd", "baseline_cost_micro_usd", "sensitive",
            "sensitive_external",
        )},
    )
