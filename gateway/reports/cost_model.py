"""The one cost model every report reads (CLI tables, CSV, JSON, the HTML page, the HTTP
reports): what a range of traffic cost, and what it saved against the baseline. Pure.

- Self-hosted cost is the GPU-hours paid: for each deployment, the time in the range that the
  policy declared it (`gateway.deployments.repository`), at its `gpu:` price. What the audit rows
  recorded for those requests (a token-priced estimate that budgets use) is not a cost here.
- API cost is what the audit rows recorded for every other backend.
- Savings = the baseline's cost for the same tokens − (API spend + GPU-hours paid).
- Attribution: each deployment's GPU cost is split per UTC day into a busy part (its paid
  cost × the share of paid minutes in which it served a request) and an idle part. The busy
  part goes to that day's requests on that deployment in proportion to their tokens (prompt +
  completion; by requests when none had tokens), by largest remainder, so the integer
  micro-USD parts add up to the whole exactly. The idle part is its own line in every
  breakdown: nobody's requests caused it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from gateway.deployments.repository import PaidSpan

IDLE = "(idle GPUs)"
SELF_HOSTED = "self_hosted"
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """One audit_daily row: a (day, tenant, requested model, backend, rule) group."""

    day: date
    tenant_id: str
    tenant: str
    model: str
    backend: str  # "" when nothing was chosen
    rule: str  # "" when no rule fired
    zone: str
    requests: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    recorded_micro_usd: int
    baseline_micro_usd: int
    sensitive: int = 0
    sensitive_external: int = 0
    redacted: int = 0
    sensitive_approved: int = 0  # of sensitive_external: unredacted, under an approval

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class CostedGroup:
    usage: UsageGroup
    api_micro_usd: int  # recorded spend on a metered (API) backend
    gpu_micro_usd: int  # this group's share of its deployment's busy GPU cost that day

    @property
    def cost_micro_usd(self) -> int:
        return self.api_micro_usd + self.gpu_micro_usd


@dataclass(frozen=True, slots=True)
class GpuDay:
    """One deployment's GPUs over one UTC day of the range."""

    backend: str
    day: date
    paid_s: float  # seconds the deployment existed in this day and the range
    gpu_s: float  # the same in GPU-seconds (× its GPU count)
    paid_micro_usd: int
    busy_minutes: int  # paid minutes in which it served at least one request
    busy_micro_usd: int  # attributed to the day's requests
    idle_micro_usd: int  # paid − attributed


@dataclass(frozen=True, slots=True)
class CostModel:
    start: datetime
    end: datetime  # the end of what was paid: never later than "now"
    groups: tuple[CostedGroup, ...]
    gpu_days: tuple[GpuDay, ...]

    @property
    def api_micro_usd(self) -> int:
        return sum(g.api_micro_usd for g in self.groups)

    @property
    def gpu_micro_usd(self) -> int:
        return sum(d.paid_micro_usd for d in self.gpu_days)

    @property
    def idle_micro_usd(self) -> int:
        return sum(d.idle_micro_usd for d in self.gpu_days)

    @property
    def cost_micro_usd(self) -> int:
        return self.api_micro_usd + self.gpu_micro_usd

    @property
    def baseline_micro_usd(self) -> int:
        return sum(g.usage.baseline_micro_usd for g in self.groups)

    @property
    def saved_micro_usd(self) -> int:
        return self.baseline_micro_usd - self.cost_micro_usd

    def gpu_billed(self) -> set[str]:
        return {d.backend for d in self.gpu_days}


def allocate(amount: int, weights: Sequence[int]) -> list[int]:
    """Split `amount` in proportion to `weights` (largest remainder): integers that add up
    to `amount` exactly. All of it goes nowhere only when every weight is zero."""
    total = sum(weights)
    if total <= 0:
        return [0] * len(weights)
    exact = [amount * w for w in weights]
    parts = [e // total for e in exact]
    left = amount - sum(parts)
    ranked = sorted(range(len(weights)), key=lambda i: (-(exact[i] % total), i))
    for i in ranked[:left]:
        parts[i] += 1
    return parts


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), UTC)


def paid_by_day(spans: Iterable[PaidSpan], start: datetime,
                end: datetime) -> dict[tuple[str, date], tuple[float, float, int]]:
    """(backend, day) → (seconds paid, GPU-seconds paid, micro-USD paid) over [start, end):
    each span counts only where it overlaps the range, never before it was declared."""
    paid: dict[tuple[str, date], tuple[float, float, int]] = {}
    for span in spans:
        low = max(span.since, start)
        high = min(span.until, end) if span.until is not None else end
        day = low.date()
        while _midnight(day) < high:
            a, b = max(low, _midnight(day)), min(high, _midnight(day) + _DAY)
            if b > a:
                seconds = (b - a).total_seconds()
                micro = round(span.hourly_micro_usd * seconds / 3600)
                s, g, m = paid.get((span.backend, day), (0.0, 0.0, 0))
                paid[(span.backend, day)] = (s + seconds, g + seconds * span.gpu_count,
                                             m + micro)
            day += _DAY
    return paid


def price_range(start: datetime, end: datetime, usage: Sequence[UsageGroup],
                spans: Sequence[PaidSpan], busy_minutes: dict[tuple[str, str], int]
                ) -> CostModel:
    """`busy_minutes`: (backend, ISO day) → minutes with traffic inside the paid spans."""
    end = max(start, end)
    paid = paid_by_day(spans, start, end)
    billed = {backend for backend, _ in paid}
    members: dict[tuple[str, date], list[int]] = {}
    for i, g in enumerate(usage):
        if g.backend in billed:
            members.setdefault((g.backend, g.day), []).append(i)
    gpu_share = [0] * len(usage)
    gpu_days = []
    for (backend, day), (seconds, gpu_seconds, micro) in sorted(paid.items()):
        paid_minutes = seconds / 60
        busy = min(float(busy_minutes.get((backend, day.isoformat()), 0)), paid_minutes)
        busy_micro = round(micro * busy / paid_minutes) if paid_minutes else 0
        who = members.get((backend, day), [])
        weights = [usage[i].tokens for i in who]
        if not any(weights):
            weights = [usage[i].requests for i in who]
        parts = allocate(busy_micro, weights)
        for i, part in zip(who, parts, strict=True):
            gpu_share[i] += part
        attributed = sum(parts)
        gpu_days.append(GpuDay(backend, day, seconds, gpu_seconds, micro, round(busy),
                               attributed, micro - attributed))
    groups = tuple(
        CostedGroup(g, 0 if g.backend in billed else g.recorded_micro_usd, gpu_share[i])
        for i, g in enumerate(usage)
    )
    return CostModel(start, end, groups, tuple(gpu_days))
