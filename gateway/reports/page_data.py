"""What the HTML report page shows, priced by the one cost model (never the raw log): cost per
day by backend (GPU-hours paid, idle ones apart) against the baseline, route mix, latency
percentiles, savings per tenant, and each backend's unit economics."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.rollup import percentile
from gateway.deployments.repository import DeclaredGpus, hourly_activity
from gateway.reports.build import economics_lines, price
from gateway.reports.cost_model import IDLE, CostModel
from gateway.reports.economics import BackendEconomics
from gateway.reports.gpus import spans_for
from gateway.reports.hourly import (
    DayFigures,
    HourlyCost,
    midnight,
    paid_minutes_by_hour,
    spread_by_hour,
    young_since,
)
from gateway.reports.periods import Period
from gateway.reports.rollup_repository import RollupQuery, latency_histograms

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

    def bounds(self, now: datetime) -> tuple[datetime, datetime]:
        """The UTC instants the days cover, never past `now`."""
        start = datetime(self.since.year, self.since.month, self.since.day, tzinfo=UTC)
        end = datetime(self.until.year, self.until.month, self.until.day, tzinfo=UTC)
        return start, max(start, min(end + timedelta(days=1), now))

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


NONE_CHOSEN = "(none chosen)"


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
    cost_micro_usd: int  # the cost model's: API spend + this group's share of GPU-hours
    baseline_cost_micro_usd: int
    sensitive: int
    sensitive_external: int
    gpu_micro_usd: int = 0  # the part of cost_micro_usd that is GPU-hours paid
    sensitive_approved: int = 0  # of sensitive_external: unredacted, under an approval


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
    cost_micro_usd: int  # API spend + GPU-hours paid (idle ones included)
    baseline_cost_micro_usd: int
    self_hosted_requests: int
    sensitive: int
    sensitive_kept_home: int
    gpu_micro_usd: int = 0  # GPU-hours paid, idle included
    idle_micro_usd: int = 0  # GPU-hours no request used (a series of its own in the chart)
    economics: tuple[BackendEconomics, ...] = ()
    # Sensitive requests sent unredacted to external backends under their approval
    # (`approved_for`): not kept at home, and not a leak either.
    sensitive_approved: int = 0
    hourly: HourlyCost | None = None  # the same cost in hours, when the data is young

    @property
    def empty(self) -> bool:
        return self.requests == 0


def build_page(
    rng: ReportRange,
    daily: Iterable[DailyTotals],
    histograms: dict[tuple[str, str], dict[int, int]],
    generated_at: datetime,
    economics: Sequence[BackendEconomics] = (),
    hourly: HourlyCost | None = None,
) -> PageData:
    """Pure: fold the priced groups into what each chart draws. Groups on the IDLE backend are
    GPU-hours no request used: cost, and nothing else."""
    days = tuple(rng.days)
    index = {d: i for i, d in enumerate(days)}
    cost: dict[str, list[int]] = {}
    baseline = [0] * len(days)
    by_backend: dict[str, int] = {}
    by_rule: dict[str, int] = {}
    tenants: dict[str, list[Any]] = {}  # id → [name, requests, cost, baseline]
    totals = dict.fromkeys(
        ("requests", "errors", "cost", "baseline", "home", "sensitive", "kept", "approved", "gpu",
         "idle"),
        0,
    )
    for g in daily:
        i = index.get(g.day)
        if i is None:
            continue
        backend = g.backend or NONE_CHOSEN
        cost.setdefault(backend, [0] * len(days))[i] += g.cost_micro_usd
        totals["cost"] += g.cost_micro_usd
        totals["gpu"] += g.gpu_micro_usd
        if backend == IDLE:
            totals["idle"] += g.cost_micro_usd
            continue
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
        totals["baseline"] += g.baseline_cost_micro_usd
        totals["home"] += g.requests if g.zone == SELF_HOSTED else 0
        totals["sensitive"] += g.sensitive
        totals["kept"] += g.sensitive - g.sensitive_external
        totals["approved"] += g.sensitive_approved
    # Idle GPUs last, whatever they cost: they are not a backend anyone was routed to.
    order = sorted(cost, key=lambda b: (b == IDLE, -sum(cost[b]), -by_backend.get(b, 0), b))
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
        gpu_micro_usd=totals["gpu"],
        idle_micro_usd=totals["idle"],
        economics=tuple(economics),
        sensitive_approved=totals["approved"],
        hourly=hourly,
    )


def _shares(counts: dict[str, int]) -> tuple[Share, ...]:
    return tuple(Share(n, c) for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


async def load_page(engine: AsyncEngine, rng: ReportRange,
                    declared: Sequence[DeclaredGpus] = (),
                    zones: dict[str, str] | None = None) -> PageData:
    """The cost model over the page's days (as every report prices them), folded per day,
    tenant, backend and rule; its size grows with days × groups, not requests."""
    start = datetime(rng.since.year, rng.since.month, rng.since.day, tzinfo=UTC)
    end = datetime(rng.until.year, rng.until.month, rng.until.day, tzinfo=UTC)
    period = Period(start, end + timedelta(days=1))
    now = datetime.now(UTC)
    async with engine.connect() as conn:
        model = await price(conn, period, now, declared)
        daily = _fold(model, rng.tenant)
        tenant_ids = sorted({g.tenant_id for g in daily if g.backend != IDLE})
        histograms = await _histograms(conn, period, rng, tenant_ids) if daily else {}
        economics = (await economics_lines(conn, period, model, zones or {})
                     if rng.tenant is None else [])
        hourly = await _hourly(conn, rng, model, daily, declared)
    return build_page(rng, daily, histograms, now, economics, hourly)


async def _hourly(conn: Any, rng: ReportRange, model: CostModel, daily: Sequence[DailyTotals],
                  declared: Sequence[DeclaredGpus]) -> HourlyCost | None:
    """Hours for a young deployment's page. Not on one tenant's page: the hours are weighed
    by every tenant's arrivals, which would misplace one tenant's money."""
    first = young_since((g.day for g in daily if g.cost_micro_usd
                         or g.baseline_cost_micro_usd), rng.until)
    if rng.tenant is not None or first is None:
        return None
    start = midnight(first)
    end = max(start, model.end)
    arrivals, busy = await hourly_activity(conn, start, end)
    paid = paid_minutes_by_hour(await spans_for(conn, declared, start, end), start, end)
    return spread_by_hour(_day_figures(daily), start, end, arrivals, busy, paid)


def _day_figures(daily: Iterable[DailyTotals]) -> list[DayFigures]:
    found: dict[tuple[date, str], list[int]] = {}
    for g in daily:
        entry = found.setdefault((g.day, g.backend or NONE_CHOSEN), [0, 0])
        entry[0] += g.cost_micro_usd
        entry[1] += g.baseline_cost_micro_usd
    return [DayFigures(day, backend, c, b) for (day, backend), (c, b) in found.items()]


def _fold(model: CostModel, tenant: str | None) -> list[DailyTotals]:
    found: dict[tuple[Any, ...], list[Any]] = {}
    for g in model.groups:
        u = g.usage
        if tenant is not None and tenant not in (u.tenant, u.tenant_id):
            continue
        entry = found.setdefault((u.day, u.tenant_id, u.backend, u.rule, u.zone),
                                 [u.tenant, 0, 0, 0, 0, 0, 0, 0, 0])
        for k, v in enumerate((u.requests, u.errors, g.cost_micro_usd, u.baseline_micro_usd,
                               u.sensitive, u.sensitive_external, g.gpu_micro_usd,
                               u.sensitive_approved), start=1):
            entry[k] += v
    daily = [DailyTotals(day, tid, e[0], backend, rule, zone, *e[1:])
             for (day, tid, backend, rule, zone), e in found.items()]
    if tenant is None:  # idle GPUs are nobody's: not on one tenant's page
        daily += [DailyTotals(d.day, "", "", IDLE, "", SELF_HOSTED, 0, 0, d.idle_micro_usd, 0,
                              0, 0, d.idle_micro_usd)
                  for d in model.gpu_days if d.idle_micro_usd]
    return daily


async def _histograms(
    conn: Any, period: Period, rng: ReportRange, tenant_ids: Sequence[str]
) -> dict[tuple[str, str], dict[int, int]]:
    """The same histograms the economics report reads, for the page's days and tenant (a
    tenant named on the page matched rows of exactly one id)."""
    tenant_id = tenant_ids[0] if rng.tenant is not None and tenant_ids else None
    return await latency_histograms(conn, RollupQuery(period, tenant_id=tenant_id))
