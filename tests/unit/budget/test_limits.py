"""Periods, period ends and validation of the budget value types."""

from __future__ import annotations

import calendar

import pytest

from gateway.budget.limits import (
    AdmitRequest,
    BudgetLimits,
    DayPeriods,
    RateLimits,
    ScopeLimits,
    period_end_unix_s,
    periods,
)


def utc(*parts: int) -> int:
    return calendar.timegm((*parts, 0, 0, 0)[:6])


@pytest.mark.parametrize(("now", "expected"), [
    (utc(2024, 1, 1, 0, 0, 0), ("2024-01-01", "2024-01")),
    (utc(2024, 2, 29, 23, 59, 59), ("2024-02-29", "2024-02")),
    (utc(2024, 12, 31, 23, 59, 59) + 0.999, ("2024-12-31", "2024-12")),
    (utc(2025, 3, 1, 0, 0, 0) - 0.001, ("2025-02-28", "2025-02")),
])
def test_periods_are_utc_day_and_month(now: float, expected: tuple[str, str]) -> None:
    assert periods(now) == expected


@pytest.mark.parametrize(("period", "end"), [
    ("2024-02-28", utc(2024, 2, 29)),
    ("2024-02-29", utc(2024, 3, 1)),
    ("2024-12-31", utc(2025, 1, 1)),
    ("2024-02", utc(2024, 3, 1)),
    ("2024-12", utc(2025, 1, 1)),
])
def test_period_end(period: str, end: int) -> None:
    assert period_end_unix_s(period) == end


@pytest.mark.parametrize("period", ["2024-13", "2024-1-01", "24-01", "2024-01-00", ""])
def test_period_end_rejects_malformed_periods(period: str) -> None:
    with pytest.raises(ValueError, match="period"):
        period_end_unix_s(period)


def test_every_period_ends_at_the_start_of_the_next() -> None:
    now = utc(2023, 12, 30)
    while now < utc(2025, 1, 2):
        day, month = periods(now)
        assert periods(period_end_unix_s(day))[0] != day
        assert periods(period_end_unix_s(day) - 1)[0] == day
        assert periods(period_end_unix_s(month) - 1)[1] == month
        now += 86_400


@pytest.mark.parametrize("make", [
    lambda: BudgetLimits(daily_micro_usd=-1),
    lambda: BudgetLimits(monthly_tokens=-5),
    lambda: BudgetLimits(soft_fraction=0.0),
    lambda: BudgetLimits(soft_fraction=1.5),
    lambda: RateLimits(rpm=0),
    lambda: RateLimits(tpm=-1),
    lambda: RateLimits(concurrent=0),
    lambda: ScopeLimits("user:1"),
    lambda: ScopeLimits("key:"),
])
def test_limits_refuse_nonsense(make: object) -> None:
    with pytest.raises(ValueError):
        make()  # type: ignore[operator]


def test_limits_accept_zero_budgets_and_unlimited() -> None:
    assert BudgetLimits(daily_micro_usd=0).daily_micro_usd == 0
    assert RateLimits().rpm is None
    assert ScopeLimits("tag:batch jobs").scope == "tag:batch jobs"


def request(**changes: object) -> AdmitRequest:
    fields: dict[str, object] = {
        "request_id": "r1", "tenant_id": "acme", "scopes": (ScopeLimits("tenant"),),
        "cost_micro_usd": 1, "tokens": 1, "day": "2024-05-01", "month": "2024-05",
    }
    fields.update(changes)
    return AdmitRequest(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("changes", [
    {"request_id": ""},
    {"tenant_id": "a{b}"},
    {"tenant_id": ""},
    {"scopes": (ScopeLimits("tenant"), ScopeLimits("tenant"))},
    {"cost_micro_usd": -1},
    {"tokens": -1},
    {"day": "2024-5-1"},
    {"month": "2024-05-01"},
])
def test_admit_request_validation(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        request(**changes)


def test_admit_request_accepts_a_valid_request() -> None:
    assert request().tenant_id == "acme"


def test_day_periods_match_periods_across_day_and_month_edges() -> None:
    remembered = DayPeriods()
    new_year = calendar.timegm((2027, 1, 1, 0, 0, 0))
    times = [new_year - 86_400.5, new_year - 0.000001, new_year, new_year + 0.5,
             new_year - 1.0,  # the clock stepped back across midnight
             new_year + 86_399.999, new_year + 86_400, 1_795_000_000.25]
    assert [remembered(t) for t in times] == [periods(t) for t in times]
