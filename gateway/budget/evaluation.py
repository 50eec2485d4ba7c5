"""The admission rule as a pure function of each scope's current state (the memory store's
core; admit.lua is its transcription for Redis)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.budget import bucket
from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    BudgetLimits,
    LimitReason,
    RateState,
    ScopeLimits,
    period_end_unix_s,
)

# A concurrency slot frees when some request finishes, which no bucket can predict: a short
# hint keeps well-behaved clients from hammering without stalling them for long.
CONCURRENT_RETRY_AFTER_S = 1.0
# Read from their class, enum members cost a descriptor call each (~0.15 µs on Python 3.11),
# and every admission names several: read once, here.
DAILY_USD, MONTHLY_USD, DAILY_TOKENS, MONTHLY_TOKENS = (
    LimitReason.DAILY_USD, LimitReason.MONTHLY_USD, LimitReason.DAILY_TOKENS,
    LimitReason.MONTHLY_TOKENS)
RPM, TPM, CONCURRENT = LimitReason.RPM, LimitReason.TPM, LimitReason.CONCURRENT


@dataclass(frozen=True, slots=True)
class ScopeState:
    """One scope as the store sees it now; bucket levels already refilled to now and None
    where the scope has no such limit."""

    spent_day_micro_usd: int = 0
    spent_month_micro_usd: int = 0
    tokens_day: int = 0
    tokens_month: int = 0
    reserved_micro_usd: int = 0
    reserved_tokens: int = 0
    in_flight: int = 0
    rpm_level: float | None = None
    tpm_level: float | None = None


def _budget_lines(
    budget: BudgetLimits, state: ScopeState, request: AdmitRequest
) -> tuple[tuple[LimitReason, int | None, int, int, int, str], ...]:
    # (reason, limit, spent, reserved, amount, period) for each of the four caps
    cost, tokens = request.cost_micro_usd, request.tokens
    return (
        (DAILY_USD, budget.daily_micro_usd, state.spent_day_micro_usd,
         state.reserved_micro_usd, cost, request.day),
        (MONTHLY_USD, budget.monthly_micro_usd, state.spent_month_micro_usd,
         state.reserved_micro_usd, cost, request.month),
        (DAILY_TOKENS, budget.daily_tokens, state.tokens_day,
         state.reserved_tokens, tokens, request.day),
        (MONTHLY_TOKENS, budget.monthly_tokens, state.tokens_month,
         state.reserved_tokens, tokens, request.month),
    )


def _budget_refusal(
    limits: ScopeLimits, state: ScopeState, request: AdmitRequest, now_unix_s: float
) -> Admission | None:
    if limits.budget is None:
        return None
    for reason, limit, spent, reserved, amount, period in _budget_lines(
        limits.budget, state, request
    ):
        if limit is None:
            continue
        if spent >= limit:  # the hard stop: not even a free request gets through
            retry = max(0.0, period_end_unix_s(period) - now_unix_s)
            return Admission(False, reason, limits.scope, retry)
        if amount > 0 and spent + reserved + amount > limit:
            return Admission(False, reason, limits.scope, None)
    return None


def _rate_refusal(
    limits: ScopeLimits, state: ScopeState, request: AdmitRequest
) -> Admission | None:
    rate = limits.rate
    if rate is None:
        return None
    if rate.concurrent is not None and state.in_flight + request.slots > rate.concurrent:
        return Admission(False, CONCURRENT, limits.scope, CONCURRENT_RETRY_AFTER_S)
    worst: Admission | None = None
    for reason, per_minute, level, amount in (
        (RPM, rate.rpm, state.rpm_level, request.requests),
        (TPM, rate.tpm, state.tpm_level, request.tokens),
    ):
        if per_minute is None or level is None:
            continue
        wait = bucket.wait_s(level, amount, per_minute)
        if level < bucket.need(amount, per_minute) and (
            worst is None or wait > (worst.retry_after_s or 0.0)
        ):
            worst = Admission(False, reason, limits.scope, wait)
    return worst


def _is_soft(request: AdmitRequest, states: Sequence[ScopeState]) -> bool:
    for limits, state in zip(request.scopes, states, strict=True):
        if limits.budget is None:
            continue
        threshold = limits.budget.soft_fraction
        for _, limit, spent, reserved, amount, _ in _budget_lines(limits.budget, state, request):
            if limit is not None and spent + reserved + amount >= threshold * limit:
                return True
    return False


def rate_state(
    request: AdmitRequest, states: Sequence[ScopeState], admitted: bool
) -> RateState | None:
    """The tightest rpm and tpm buckets after this request (before it, if refused)."""
    requests: tuple[float, int] | None = None  # (remaining, limit)
    tokens: tuple[float, int] | None = None
    for limits, state in zip(request.scopes, states, strict=True):
        rate = limits.rate
        if rate is None:
            continue
        if rate.rpm is not None and state.rpm_level is not None:
            left = state.rpm_level - (request.requests if admitted else 0)
            if requests is None or (left, rate.rpm) < requests:
                requests = (left, rate.rpm)
        if rate.tpm is not None and state.tpm_level is not None:
            left = state.tpm_level - (request.tokens if admitted else 0)
            if tokens is None or (left, rate.tpm) < tokens:
                tokens = (left, rate.tpm)
    if requests is None and tokens is None:
        return None
    out = RateState()
    if requests is not None:
        left, limit = requests
        out = RateState(limit, max(0, math.floor(left)), bucket.full_in_s(left, limit))
    if tokens is not None:
        left, limit = tokens
        out = RateState(out.limit_requests, out.remaining_requests, out.reset_requests_s,
                        limit, max(0, math.floor(left)), bucket.full_in_s(left, limit))
    return out


def evaluate(
    request: AdmitRequest, states: Sequence[ScopeState], now_unix_s: float
) -> Admission:
    """Admit only if every scope admits. A budget refusal wins over a rate refusal (retrying
    cannot cure it); among rate refusals the longest wait is reported, so that a retry after
    it is not refused again by another scope."""
    pairs = list(zip(request.scopes, states, strict=True))
    for limits, state in pairs:
        refusal = _budget_refusal(limits, state, request, now_unix_s)
        if refusal is not None:
            return refusal
    worst: Admission | None = None
    for limits, state in pairs:
        refusal = _rate_refusal(limits, state, request)
        if refusal is not None and (
            worst is None or (refusal.retry_after_s or 0.0) > (worst.retry_after_s or 0.0)
        ):
            worst = refusal
    if worst is not None:
        return Admission(False, worst.reason, worst.scope, worst.retry_after_s,
                         rate=rate_state(request, states, admitted=False))
    return Admission(True, soft_limit=_is_soft(request, states),
                     rate=rate_state(request, states, admitted=True))
