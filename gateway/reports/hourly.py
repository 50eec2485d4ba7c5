"""Hourly bins for the report page's cost chart when the data is young (under two UTC days):
each day's figures from the one cost model, spread over its hours by what happened in them,
so the hours add up to the days exactly. Pure.

The cost model prices whole UTC days; the hours only say when within a day the money went.
A backend's cost and baseline follow its arrivals per hour (the load minutes), idle GPUs
follow the paid minutes in which no request ran. A day with nothing to weigh it by keeps its
figures in its paid hours (or its first hour), never drops them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from gateway.deployments.repository import PaidSpan
from gateway.reports.cost_model import IDLE, allocate

HOUR = timedelta(hours=1)
# Data reaching back no further than yesterday gets hours: 48 bars at most.
YOUNG_DAYS = 2


@dataclass(frozen=True, slots=True)
class DayFigures:
    """What the chart draws for one backend on one day, from the cost model."""

    day: date
    backend: str  # IDLE for GPU-hours no request used
    cost_micro_usd: int
    baseline_micro_usd: int


@dataclass(frozen=True, slots=True)
class HourlyCost:
    hours: tuple[datetime, ...]  # UTC, each the start of its hour
    cost_by_hour: dict[str, tuple[int, ...]]  # backend → micro-USD per hour
    baseline_by_hour: tuple[int, ...]


def young_since(days: Iterable[date], until: date) -> date | None:
    """The first day with data when all of it lies in the last YOUNG_DAYS days of the range;
    None for an older (or empty) range, which keeps its daily bars."""
    first = min(days, default=None)
    if first is None or (until - first).days >= YOUNG_DAYS:
        return None
    return first


def midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def paid_minutes_by_hour(spans: Sequence[PaidSpan], start: datetime,
                         end: datetime) -> dict[tuple[str, datetime], float]:
    """(backend, hour) → minutes of [start, end) in which the deployment was paid for."""
    found: dict[tuple[str, datetime], float] = {}
    for span in spans:
        low = max(span.since, start)
        high = min(span.until, end) if span.until is not None else end
        hour = low.replace(minute=0, second=0, microsecond=0)
        while hour < high:
            seconds = (min(high, hour + HOUR) - max(low, hour)).total_seconds()
            if seconds > 0:
                key = (span.backend, hour)
                found[key] = found.get(key, 0.0) + seconds / 60
            hour += HOUR
    return found


def spread_by_hour(figures: Sequence[DayFigures], start: datetime, end: datetime,
                   arrivals: dict[tuple[str, datetime], int],
                   busy: dict[tuple[str, datetime], int],
                   paid: dict[tuple[str, datetime], float]) -> HourlyCost:
    """Hours from `start` (a midnight) up to `end`. `arrivals`: (backend, hour) → requests
    that started in it; `busy`: (backend, hour) → minutes with traffic; `paid`: (backend,
    hour) → minutes paid for (`paid_minutes_by_hour`)."""
    count = max(1, -(-int((end - start).total_seconds()) // 3600))
    hours = tuple(start + i * HOUR for i in range(count))
    index = {h: i for i, h in enumerate(hours)}
    cost: dict[str, list[int]] = {}
    baseline = [0] * count
    idle_weight: dict[datetime, int] = {}
    for (backend, hour), minutes in paid.items():
        spare = max(0.0, minutes - busy.get((backend, hour), 0))
        idle_weight[hour] = idle_weight.get(hour, 0) + round(spare * 60)  # in seconds
    for f in figures:
        day_hours = [h for h in hours if h.date() == f.day]
        if not day_hours:
            continue
        if f.backend == IDLE:
            weights = [idle_weight.get(h, 0) for h in day_hours]
        else:
            weights = [arrivals.get((f.backend, h), 0) for h in day_hours]
        if not any(weights):  # nothing to weigh by: its paid hours, else its first hour
            weights = [round(sum(m for (_, ph), m in paid.items() if ph == h) * 60)
                       for h in day_hours]
        if not any(weights):
            weights = [1] + [0] * (len(day_hours) - 1)
        series = cost.setdefault(f.backend, [0] * count)
        for h, part in zip(day_hours, allocate(f.cost_micro_usd, weights), strict=True):
            series[index[h]] += part
        for h, part in zip(day_hours, allocate(f.baseline_micro_usd, weights), strict=True):
            baseline[index[h]] += part
    return HourlyCost(hours, {b: tuple(v) for b, v in cost.items()}, tuple(baseline))
