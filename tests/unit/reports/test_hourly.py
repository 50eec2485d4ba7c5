"""Hourly bins for a young deployment's cost chart: each day's figures spread over its hours,
adding up to the day exactly; checked by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from gateway.deployments.repository import PaidSpan
from gateway.reports.cost_model import IDLE
from gateway.reports.hourly import (
    DayFigures,
    paid_minutes_by_hour,
    spread_by_hour,
    young_since,
)

DAY = date(2026, 11, 28)
START = datetime(2026, 11, 28, tzinfo=UTC)


def at(hour: int, minute: int = 0) -> datetime:
    return START + timedelta(hours=hour, minutes=minute)


def test_only_data_under_two_days_old_gets_hours() -> None:
    assert young_since([DAY], DAY) == DAY
    assert young_since([DAY, DAY - timedelta(days=1)], DAY) == DAY - timedelta(days=1)
    assert young_since([DAY - timedelta(days=2)], DAY) is None  # three days: keep the bars
    assert young_since([], DAY) is None


def test_paid_minutes_follow_the_span_inside_the_range() -> None:
    # Declared at 10:30, still running; the range ends at 12:15.
    span = PaidSpan("llama-8b", at(10, 30), None, 800_000, 1)
    assert paid_minutes_by_hour([span], START, at(12, 15)) == {
        ("llama-8b", at(10)): 30.0, ("llama-8b", at(11)): 60.0, ("llama-8b", at(12)): 15.0}
    dropped = PaidSpan("llama-8b", at(9), at(9, 20), 800_000, 1)
    assert paid_minutes_by_hour([dropped], START, at(12)) == {("llama-8b", at(9)): 20.0}


def test_cost_follows_arrivals_and_idle_the_minutes_nobody_used() -> None:
    figures = [DayFigures(DAY, "gpt-4o", 1_000, 4_000), DayFigures(DAY, IDLE, 600, 0)]
    arrivals = {("gpt-4o", at(10)): 1, ("gpt-4o", at(11)): 3}
    # llama-8b paid from 10:30 to 12:00, busy 5 minutes in the first hour and 20 in the next:
    # 25 and 40 idle minutes take 600 × 25/65 and 600 × 40/65 (230.8 and 369.2).
    paid = {("llama-8b", at(10)): 30.0, ("llama-8b", at(11)): 60.0}
    busy = {("llama-8b", at(10)): 5, ("llama-8b", at(11)): 20}
    found = spread_by_hour(figures, START, at(12), arrivals, busy, paid)
    assert found.hours == tuple(at(h) for h in range(12))
    assert found.cost_by_hour["gpt-4o"][10:] == (250, 750)
    assert found.baseline_by_hour[10:] == (1_000, 3_000)
    assert found.cost_by_hour[IDLE][10:] == (231, 369)
    assert sum(found.cost_by_hour["gpt-4o"][:10]) == 0


def test_a_day_with_nothing_to_weigh_it_by_keeps_its_money() -> None:
    # A group with no arrivals recorded (rows older than the load minutes) lands in the paid
    # hours, and with none of those in the day's first hour: never dropped.
    found = spread_by_hour([DayFigures(DAY, "old", 700, 70)], START, at(3), {}, {},
                           {("llama-8b", at(2)): 60.0})
    assert found.cost_by_hour["old"] == (0, 0, 700)
    bare = spread_by_hour([DayFigures(DAY, "old", 700, 70)], START, at(3), {}, {}, {})
    assert bare.cost_by_hour["old"] == (700, 0, 0) and bare.baseline_by_hour == (70, 0, 0)


@given(st.lists(st.tuples(st.sampled_from(["a", "b", IDLE]), st.integers(0, 10**9),
                          st.integers(0, 10**9), st.integers(0, 1)), max_size=6),
       st.dictionaries(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 47)),
                       st.integers(0, 500), max_size=20),
       st.integers(1, 48))
def test_the_hours_add_up_to_the_days(rows: list[tuple[str, int, int, int]],
                                      counts: dict[tuple[str, int], int], hours: int) -> None:
    figures = [DayFigures(DAY + timedelta(days=d), b, c, base) for b, c, base, d in rows
               if d * 24 < hours]
    arrivals = {(b, at(h)): n for (b, h), n in counts.items()}
    paid = {("a", at(h)): 60.0 for h in range(hours)}
    found = spread_by_hour(figures, START, at(hours), arrivals, {}, paid)
    for backend in {f.backend for f in figures}:
        assert sum(found.cost_by_hour[backend]) == sum(
            f.cost_micro_usd for f in figures if f.backend == backend)
    assert sum(found.baseline_by_hour) == sum(f.baseline_micro_usd for f in figures)
