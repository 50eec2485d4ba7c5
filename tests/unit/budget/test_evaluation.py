"""The admission rule on plain values: budgets, rates, the soft flag and the rate headers."""

from __future__ import annotations

import pytest

from gateway.budget.evaluation import CONCURRENT_RETRY_AFTER_S, ScopeState, evaluate
from gateway.budget.limits import (
    AdmitRequest,
    BudgetLimits,
    RateLimits,
    ScopeLimits,
    period_end_unix_s,
)

NOW = period_end_unix_s("2024-05-01") - 3600.0  # one hour before the day ends


def ask(*scopes: ScopeLimits, cost: int = 0, tokens: int = 0) -> AdmitRequest:
    return AdmitRequest("r", "acme", scopes, cost, tokens, "2024-05-01", "2024-05")


def test_budget_boundary_is_inclusive() -> None:
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=100))
    state = ScopeState(spent_day_micro_usd=60, reserved_micro_usd=30)
    assert evaluate(ask(scope, cost=10), [state], NOW).admitted
    refusal = evaluate(ask(scope, cost=11), [state], NOW)
    assert (refusal.reason, refusal.retry_after_s) == ("daily_usd", None)


def test_free_requests_pass_until_spend_reaches_the_cap() -> None:
    scope = ScopeLimits("tenant", BudgetLimits(monthly_micro_usd=100))
    over_by_reservations = ScopeState(spent_month_micro_usd=99, reserved_micro_usd=50)
    assert evaluate(ask(scope), [over_by_reservations], NOW).admitted
    at_cap = evaluate(ask(scope), [ScopeState(spent_month_micro_usd=100)], NOW)
    assert at_cap.reason == "monthly_usd"
    assert at_cap.retry_after_s == pytest.approx(period_end_unix_s("2024-05") - NOW)


def test_daily_hard_stop_lasts_until_midnight_utc() -> None:
    scope = ScopeLimits("tenant", BudgetLimits(daily_tokens=0))
    refusal = evaluate(ask(scope), [ScopeState()], NOW)
    assert (refusal.reason, refusal.retry_after_s) == ("daily_tokens", 3600.0)


def test_a_budget_refusal_wins_over_a_rate_refusal() -> None:
    limited = ScopeLimits("tenant", None, RateLimits(rpm=1))
    broke = ScopeLimits("key:k", BudgetLimits(daily_micro_usd=10))
    states = [ScopeState(rpm_level=0.0), ScopeState(spent_day_micro_usd=10)]
    refusal = evaluate(ask(limited, broke), states, NOW)
    assert (refusal.reason, refusal.scope) == ("daily_usd", "key:k")


def test_rate_refusals_report_the_longest_wait_across_scopes() -> None:
    a = ScopeLimits("tenant", None, RateLimits(rpm=60, tpm=600))
    b = ScopeLimits("key:k", None, RateLimits(concurrent=1))
    states = [ScopeState(rpm_level=0.5, tpm_level=0.0), ScopeState(in_flight=1)]
    refusal = evaluate(ask(a, b, tokens=50), states, NOW)
    assert (refusal.reason, refusal.scope, refusal.retry_after_s) == ("tpm", "tenant", 5.0)
    only_concurrency = evaluate(ask(b), [ScopeState(in_flight=1)], NOW)
    assert only_concurrency.retry_after_s == CONCURRENT_RETRY_AFTER_S


def test_soft_flag_counts_this_request() -> None:
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=1000, soft_fraction=0.5))
    state = ScopeState(spent_day_micro_usd=300, reserved_micro_usd=100)
    assert not evaluate(ask(scope, cost=99), [state], NOW).soft_limit
    assert evaluate(ask(scope, cost=100), [state], NOW).soft_limit


def test_rate_state_takes_the_tightest_bucket_of_each_kind() -> None:
    a = ScopeLimits("tenant", None, RateLimits(rpm=100, tpm=1000))
    b = ScopeLimits("key:k", None, RateLimits(rpm=10, tpm=100_000))
    states = [ScopeState(rpm_level=100.0, tpm_level=1000.0),
              ScopeState(rpm_level=3.5, tpm_level=100_000.0)]
    state = evaluate(ask(a, b, tokens=400), states, NOW).rate
    assert state is not None
    assert (state.limit_requests, state.remaining_requests) == (10, 2)
    assert state.reset_requests_s == pytest.approx(7.5 * 6.0)
    assert (state.limit_tokens, state.remaining_tokens) == (1000, 600)
    assert state.reset_tokens_s == pytest.approx(24.0)


def test_rate_state_of_a_refusal_is_before_the_request_and_never_negative() -> None:
    scope = ScopeLimits("tenant", None, RateLimits(tpm=100))
    refusal = evaluate(ask(scope, tokens=10), [ScopeState(tpm_level=-20.0)], NOW)
    assert refusal.rate is not None
    assert (refusal.rate.limit_requests, refusal.rate.remaining_tokens) == (None, 0)
    assert refusal.rate.reset_tokens_s == pytest.approx(72.0)
