"""Value types of budgets and rate limits: what a tenant may spend, what a request asks for,
and what the store answered. Also the UTC periods (day, month) that spend is counted in."""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from enum import StrEnum

# Moved to gateway/types.py (the policy compiles limits at load and may not import budget/);
# re-exported here, where the budget store and its callers have always found them.
from gateway.types import BudgetLimits as BudgetLimits
from gateway.types import RateLimits as RateLimits
from gateway.types import ScopeLimits as ScopeLimits
from gateway.types import check_scope as check_scope


class LimitReason(StrEnum):
    """Which limit refused an admission; admit.lua answers with these same spellings, and
    they are the `reason` label of the rejection metric."""

    DAILY_USD = "daily_usd"
    MONTHLY_USD = "monthly_usd"
    DAILY_TOKENS = "daily_tokens"
    MONTHLY_TOKENS = "monthly_tokens"
    RPM = "rpm"
    TPM = "tpm"
    CONCURRENT = "concurrent"

    @property
    def rate(self) -> bool:
        """A rate limit (a bucket or concurrency): a retry later may pass. Else a budget,
        final for its period."""
        return self in _RATE

    @property
    def daily(self) -> bool:
        """A budget counted per UTC day (else per month, or a rate limit)."""
        return self in _DAILY

    @property
    def money(self) -> bool:
        """A budget in USD (else in tokens, or a rate limit)."""
        return self in _MONEY


_RATE = frozenset({LimitReason.RPM, LimitReason.TPM, LimitReason.CONCURRENT})
_DAILY = frozenset({LimitReason.DAILY_USD, LimitReason.DAILY_TOKENS})
_MONEY = frozenset({LimitReason.DAILY_USD, LimitReason.MONTHLY_USD})

_DAY = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\Z")
_MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])\Z")


def periods(now_unix_s: float) -> tuple[str, str]:
    """The UTC day ("YYYY-MM-DD") and month ("YYYY-MM") that `now_unix_s` falls in."""
    day = time.strftime("%Y-%m-%d", time.gmtime(now_unix_s))
    return day, day[:7]


class DayPeriods:
    """`periods(now)`, the strings made once per UTC day (a unix day is exactly 86,400 s),
    not per request; a time outside the remembered day (either side) is computed afresh."""

    def __init__(self) -> None:
        self._start, self._end, self._found = 0.0, 0.0, ("", "")

    def __call__(self, now_unix_s: float) -> tuple[str, str]:
        if not self._start <= now_unix_s < self._end:
            self._start = now_unix_s - now_unix_s % 86_400
            self._end = self._start + 86_400
            self._found = periods(now_unix_s)
        return self._found


def period_end_unix_s(period: str) -> int:
    """When a day ("YYYY-MM-DD") or month ("YYYY-MM") period ends, in UTC unix seconds."""
    if _DAY.match(period):
        year, month, day = (int(part) for part in period.split("-"))
        return calendar.timegm((year, month, day, 0, 0, 0)) + 86_400
    if _MONTH.match(period):
        year, month = (int(part) for part in period.split("-"))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        return calendar.timegm((year, month, 1, 0, 0, 0))
    raise ValueError(f"not a day or month period: {period!r}")


def check_tenant_id(tenant_id: str) -> None:
    # The tenant id is the Redis Cluster hash tag: a brace inside it would change the slot.
    if not tenant_id or "{" in tenant_id or "}" in tenant_id:
        raise ValueError(f"tenant id must be non-empty and without braces: {tenant_id!r}")


@dataclass(frozen=True, slots=True)
class AdmitRequest:
    """One request to admit; cost and tokens are the worst case, reserved until settled.

    A lease (leasing.py) is one admission for several requests at once: `requests` permits
    taken from the rpm buckets and `slots` places counted against concurrency limits, held
    until the lease is settled. A single request is a lease of one of each."""

    request_id: str
    tenant_id: str
    scopes: tuple[ScopeLimits, ...]
    cost_micro_usd: int
    tokens: int
    day: str
    month: str
    requests: int = 1
    slots: int = 1

    def __post_init__(self) -> None:
        if not self.request_id:
            raise ValueError("request_id must not be empty")
        check_tenant_id(self.tenant_id)
        names = [s.scope for s in self.scopes]
        if len(set(names)) != len(names):
            raise ValueError(f"scopes must be distinct: {names}")
        if self.cost_micro_usd < 0 or self.tokens < 0:
            raise ValueError("cost_micro_usd and tokens must be >= 0")
        if self.requests < 1 or self.slots < 1:
            raise ValueError("requests and slots must be >= 1")
        if not _DAY.match(self.day) or not _MONTH.match(self.month):
            raise ValueError(f"day/month must be YYYY-MM-DD/YYYY-MM: {self.day!r}, {self.month!r}")


@dataclass(frozen=True, slots=True)
class Reservation:
    """What admit held back; hand it to settle exactly as received."""

    request_id: str
    tenant_id: str
    scopes: tuple[str, ...]
    cost_micro_usd: int
    tokens: int
    day: str
    month: str
    requests: int = 1
    slots: int = 1


@dataclass(frozen=True, slots=True)
class RateState:
    """The most constrained rpm and tpm buckets, for OpenAI's x-ratelimit-* headers.
    Remaining counts are after this request; reset is the time until the bucket is full."""

    limit_requests: int | None = None
    remaining_requests: int | None = None
    reset_requests_s: float | None = None
    limit_tokens: int | None = None
    remaining_tokens: int | None = None
    reset_tokens_s: float | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    """The store's answer. A budget refusal is hard: retry_after_s is the time until the
    period ends when spend alone reached the limit, else None (in-flight requests may settle
    for less). A rate refusal says when the bucket has room."""

    admitted: bool
    reason: LimitReason | None = None
    scope: str | None = None
    retry_after_s: float | None = None
    soft_limit: bool = False
    rate: RateState | None = None
    reservation: Reservation | None = None


@dataclass(frozen=True, slots=True)
class ScopeUsage:
    scope: str
    spent_day_micro_usd: int
    spent_month_micro_usd: int
    tokens_day: int
    tokens_month: int
    reserved_micro_usd: int
    reserved_tokens: int
    in_flight: int


class BudgetUnavailable(Exception):
    """The store's backing service failed or timed out; the caller picks fail-open/closed."""


def reservation_of(request: AdmitRequest) -> Reservation:
    return Reservation(
        request.request_id,
        request.tenant_id,
        tuple(s.scope for s in request.scopes),
        request.cost_micro_usd,
        request.tokens,
        request.day,
        request.month,
        request.requests,
        request.slots,
    )


def unused_requests(reservation: Reservation, requests_used: int | None) -> int:
    """The rpm permits of a lease that settle gives back (None: all were used)."""
    if requests_used is None:
        return 0
    return max(0, reservation.requests - max(0, requests_used))
