"""The in-process BudgetStore: budgets and rate limits of one gateway process (the embedded
default and the reference the Redis store is tested against)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from gateway.budget import bucket
from gateway.budget.evaluation import ScopeState, evaluate
from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    Reservation,
    ScopeLimits,
    ScopeUsage,
    check_tenant_id,
    reservation_of,
    unused_requests,
)

# (tenant_id, scope) and (tenant_id, scope, period)
_ScopeKey = tuple[str, str]
_PeriodKey = tuple[str, str, str]


@dataclass(slots=True)
class _Bucket:
    level: float
    at_s: float
    per_minute: int

    def now(self, now_s: float, per_minute: int) -> float:
        # A changed limit (policy reload) applies from now on: the level is capped to it.
        self.level = bucket.refill(self.level, now_s - self.at_s, per_minute)
        self.at_s, self.per_minute = now_s, per_minute
        return self.level


@dataclass(slots=True)
class _Held:
    micro_usd: int = 0
    tokens: int = 0
    in_flight: int = 0


class MemoryBudgetStore:
    """Every check-and-update runs without an await, so asyncio needs no lock. The clock is
    wall time, as in Redis: a hard stop lasts until a UTC period ends."""

    def __init__(
        self,
        *,
        reservation_ttl_s: float = 900.0,
        settled_memory_s: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ttl_s = reservation_ttl_s
        self._settled_memory_s = settled_memory_s
        self._clock = clock
        self._spent_usd: dict[_PeriodKey, int] = {}
        self._spent_tokens: dict[_PeriodKey, int] = {}
        self._held: dict[_ScopeKey, _Held] = {}
        self._rpm: dict[_ScopeKey, _Bucket] = {}
        self._tpm: dict[_ScopeKey, _Bucket] = {}
        # Insertion order is expiry order (each TTL is constant), so purging looks only at the
        # oldest entries: O(expired), not O(all). Settled ids are remembered for
        # settled_memory_s: a settle retried within it is a no-op.
        self._reservations: dict[str, tuple[Reservation, float]] = {}
        self._settled: dict[str, float] = {}

    async def admit(self, request: AdmitRequest) -> Admission:
        now = self._clock()
        self._purge(now)
        if request.request_id in self._reservations:  # a retried admit holds nothing twice
            return Admission(True, reservation=self._reservations[request.request_id][0])
        states = [self._state(request, limits, now) for limits in request.scopes]
        admission = evaluate(request, states, now)
        if not admission.admitted:
            return admission
        reservation = reservation_of(request)
        for limits in request.scopes:
            key = (request.tenant_id, limits.scope)
            held = self._held.setdefault(key, _Held())
            held.micro_usd += request.cost_micro_usd
            held.tokens += request.tokens
            held.in_flight += request.slots
            rate = limits.rate
            if rate is not None and rate.rpm is not None:
                self._rpm[key].level -= request.requests  # _state() created the bucket
            if rate is not None and rate.tpm is not None:
                self._tpm[key].level -= request.tokens
        self._reservations[request.request_id] = (reservation, now + self._ttl_s)
        return replace(admission, reservation=reservation)

    async def settle(
        self,
        reservation: Reservation,
        actual_micro_usd: int,
        actual_tokens: int,
        requests_used: int | None = None,
    ) -> None:
        now = self._clock()
        if reservation.request_id in self._settled:
            return
        self._settled[reservation.request_id] = now + self._settled_memory_s
        held = self._reservations.pop(reservation.request_id, None)
        if held is not None:
            self._release(held[0])
        cost, tokens = max(0, actual_micro_usd), max(0, actual_tokens)
        tenant = reservation.tenant_id
        for scope in reservation.scopes:
            for period in (reservation.day, reservation.month):
                key = (tenant, scope, period)
                self._spent_usd[key] = self._spent_usd.get(key, 0) + cost
                self._spent_tokens[key] = self._spent_tokens.get(key, 0) + tokens
            tpm = self._tpm.get((tenant, scope))
            if tpm is not None:
                # The estimate was taken at admit; the bucket owes (or is owed) the difference.
                level = tpm.now(now, tpm.per_minute) + reservation.tokens - tokens
                tpm.level = min(float(tpm.per_minute), level)
            unused = unused_requests(reservation, requests_used)
            rpm = self._rpm.get((tenant, scope))
            if rpm is not None and unused:
                # A lease's permits nobody used go back, so they are not lost to the others.
                rpm.level = min(float(rpm.per_minute), rpm.now(now, rpm.per_minute) + unused)

    async def usage(self, tenant_id: str, scope: str, day: str, month: str) -> ScopeUsage:
        check_tenant_id(tenant_id)  # as the Redis store must: the contract is one
        self._purge(self._clock())
        held = self._held.get((tenant_id, scope), _Held())
        return ScopeUsage(
            scope,
            self._spent_usd.get((tenant_id, scope, day), 0),
            self._spent_usd.get((tenant_id, scope, month), 0),
            self._spent_tokens.get((tenant_id, scope, day), 0),
            self._spent_tokens.get((tenant_id, scope, month), 0),
            held.micro_usd,
            held.tokens,
            held.in_flight,
        )

    async def close(self) -> None:
        return None

    def _state(self, request: AdmitRequest, limits: ScopeLimits, now: float) -> ScopeState:
        tenant, scope = request.tenant_id, limits.scope
        key = (tenant, scope)
        held = self._held.get(key, _Held())
        rpm_level = tpm_level = None
        rate = limits.rate
        if rate is not None and rate.rpm is not None:
            rpm_level = self._rpm.setdefault(key, _Bucket(rate.rpm, now, rate.rpm)).now(
                now, rate.rpm)
        if rate is not None and rate.tpm is not None:
            tpm_level = self._tpm.setdefault(key, _Bucket(rate.tpm, now, rate.tpm)).now(
                now, rate.tpm)
        return ScopeState(
            self._spent_usd.get((tenant, scope, request.day), 0),
            self._spent_usd.get((tenant, scope, request.month), 0),
            self._spent_tokens.get((tenant, scope, request.day), 0),
            self._spent_tokens.get((tenant, scope, request.month), 0),
            held.micro_usd,
            held.tokens,
            held.in_flight,
            rpm_level,
            tpm_level,
        )

    def _release(self, reservation: Reservation) -> None:
        for scope in reservation.scopes:
            key = (reservation.tenant_id, scope)
            held = self._held.get(key)
            if held is None:
                continue
            held.micro_usd -= reservation.cost_micro_usd
            held.tokens -= reservation.tokens
            held.in_flight -= reservation.slots
            if held.in_flight <= 0:
                del self._held[key]  # key and tag scopes come and go: keep no empty entries

    def _purge(self, now: float) -> None:
        reservations = self._reservations
        while reservations:
            oldest = next(iter(reservations))
            reservation, expires_s = reservations[oldest]
            if expires_s > now:
                break
            del reservations[oldest]
            self._release(reservation)
        settled = self._settled
        while settled:
            oldest = next(iter(settled))
            if settled[oldest] > now:
                break
            del settled[oldest]
