"""Budget reservations: reserve the worst case before dispatch, settle to the actual after.

`MemoryBudgetStore` is the embedded default (one process). It already keeps the contract the
Redis store will keep: reservations expire, settling is idempotent by request id, and spend is
tracked per tenant per UTC day.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Reservation:
    request_id: str
    tenant_id: str
    amount_micro_usd: int
    day: str


class BudgetStore(Protocol):
    async def reserve(
        self, request_id: str, tenant_id: str, amount_micro_usd: int
    ) -> Reservation: ...

    async def settle(self, reservation: Reservation, actual_micro_usd: int) -> None: ...

    async def spent_today(self, tenant_id: str) -> int: ...


class MemoryBudgetStore:
    def __init__(
        self,
        *,
        reservation_ttl_s: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ttl_s = reservation_ttl_s
        self._clock = clock
        self._spent: dict[tuple[str, str], int] = {}
        self._held: dict[str, tuple[Reservation, float]] = {}
        self._settled: dict[str, float] = {}
        self._day_cache: tuple[int, str] = (-1, "")

    def _day(self) -> str:
        day_number = int(self._clock() // 86_400)
        if day_number != self._day_cache[0]:
            self._day_cache = (day_number, time.strftime("%Y-%m-%d", time.gmtime(self._clock())))
        return self._day_cache[1]

    async def reserve(self, request_id: str, tenant_id: str, amount_micro_usd: int) -> Reservation:
        reservation = Reservation(request_id, tenant_id, max(0, amount_micro_usd), self._day())
        self._held[request_id] = (reservation, self._clock() + self._ttl_s)
        return reservation

    async def settle(self, reservation: Reservation, actual_micro_usd: int) -> None:
        if reservation.request_id in self._settled:
            return  # idempotent: a retried settle must not double-charge
        self._held.pop(reservation.request_id, None)
        now = self._clock()
        self._settled[reservation.request_id] = now + self._ttl_s
        key = (reservation.tenant_id, reservation.day)
        self._spent[key] = self._spent.get(key, 0) + max(0, actual_micro_usd)
        self._expire(now)

    async def spent_today(self, tenant_id: str) -> int:
        self._expire(self._clock())
        day = self._day()
        held = sum(r.amount_micro_usd for r, _ in self._held.values() if r.tenant_id == tenant_id)
        return self._spent.get((tenant_id, day), 0) + held

    def _expire(self, now: float) -> None:
        # The TTL is constant, so insertion order is expiry order: only the oldest entries
        # are ever looked at, and each is removed once (O(1) amortised per request).
        held = self._held
        while held:
            oldest = next(iter(held))
            if held[oldest][1] > now:
                break
            del held[oldest]
        settled = self._settled
        while settled:
            oldest = next(iter(settled))
            if settled[oldest] > now:
                break
            del settled[oldest]
