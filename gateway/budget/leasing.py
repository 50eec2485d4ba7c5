"""Admission from leases: a replica reserves a slice of a tenant's budgets and rate limits
from the shared store in one call, admits requests against that slice locally, and settles
the slice in one call once its requests are done.

A lease is an ordinary reservation, only larger: `requests` rpm permits, `slots` concurrency
places, and the worst-case cost and tokens of that many typical requests. So every guarantee
of the shared store still holds across replicas: what all leases hold never exceeds what the
limits allow, nothing is admitted after a hard stop, and a crashed replica's leases expire
like any reservation. What changes:
- requests cost no round trip while a lease has room; one in `requests` pays for the next;
- spend reaches the shared store when a lease is settled (at most `lease_s` plus the
  longest request later), and until then shows there as reserved;
- a lease holds at most `share` of any limit, so a soft-limit warning can come that much
  early and x-ratelimit-remaining-* is this replica's view;
- near a limit a lease would not fit, and admission falls back to one request at a time,
  exactly as without leases.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import replace

from gateway.budget.lease import Lease, LeaseKey, LeaseStats, local_rate
from gateway.budget.lease_sizing import Demand, LeaseSize, size_lease
from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    BudgetUnavailable,
    Reservation,
    ScopeUsage,
    reservation_of,
)
from gateway.budget.store import BudgetStore

log = logging.getLogger(__name__)


class LeasingBudgetStore:
    """A BudgetStore in front of a shared one (RedisBudgetStore); owns no connection."""

    def __init__(
        self,
        shared: BudgetStore,
        *,
        lease_s: float = 0.5,
        max_requests: int = 64,
        share: float = 0.02,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._shared = shared
        self._lease_s = lease_s
        self._max_requests = max_requests
        self._share = share
        self._clock = clock
        self._open: dict[LeaseKey, Lease] = {}
        self._by_request: dict[str, tuple[Lease, Reservation]] = {}
        self._demand: dict[LeaseKey, Demand] = {}
        self._unsettled: list[Lease] = []  # closed and drained, but the store was down
        self._settling: set[asyncio.Task[None]] = set()
        self._pending: dict[LeaseKey, asyncio.Future[None]] = {}
        self.stats = LeaseStats()
        self._sweeper: asyncio.Task[None] | None = None

    async def admit(self, request: AdmitRequest) -> Admission:
        if request.request_id in self._by_request:  # a retried admit holds nothing twice
            return Admission(True, reservation=self._by_request[request.request_id][1])
        self._ensure_sweeper()
        now = self._clock()
        key: LeaseKey = (request.tenant_id, request.scopes, request.day, request.month)
        demand = self._demand.get(key)
        if demand is None:
            if len(self._demand) > 100_000:  # keys and days come and go
                self._demand.clear()
            demand = self._demand[key] = Demand(now)
        demand.saw(request, now, self._lease_s)
        lease = self._open.get(key)
        if lease is None or not lease.fits(request, now):
            admission, lease = await self._lease_for(request, key, demand)
            if lease is None:
                return admission
        lease.take(request)
        self.stats.admitted += 1
        demand.in_flight(lease.in_flight)
        held = reservation_of(request)
        self._by_request[request.request_id] = (lease, held)
        return Admission(True, soft_limit=lease.soft, rate=local_rate(lease), reservation=held)

    async def settle(
        self,
        reservation: Reservation,
        actual_micro_usd: int,
        actual_tokens: int,
        requests_used: int | None = None,
    ) -> None:
        found = self._by_request.pop(reservation.request_id, None)
        if found is None:
            return  # settled already (or admitted by another process: nothing held here)
        lease, held = found
        lease.give_back(held, max(0, actual_micro_usd), max(0, actual_tokens))
        if lease.in_flight == 0 and (lease.closed or self._clock() >= lease.deadline):
            self._close(lease)

    async def usage(self, tenant_id: str, scope: str, day: str, month: str) -> ScopeUsage:
        # This replica's finished requests show as spent, not as a held lease: a tenant that
        # reads its usage right after a request sees that request (other replicas' settle
        # within lease_s).
        for lease in list(self._open.values()):
            if lease.key[0] == tenant_id:
                self._close(lease)
        await self._drain(retry=False)  # a store that is down answers the read below anyway
        return await self._shared.usage(tenant_id, scope, day, month)

    async def close(self) -> None:
        """Settle every lease (call after in-flight requests have finished)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for lease in list(self._open.values()):
            if lease.in_flight:
                log.warning("budget lease closed with %d requests in flight; their spend is "
                            "not recorded", lease.in_flight)
                lease.in_flight = 0
            self._close(lease)
        await self._drain()
        await self._shared.close()

    async def flush(self, *, everything: bool = False) -> None:
        """Close the leases whose time is up (every lease with `everything`), and wait until
        those whose requests are done are settled: the sweeper's round, and how tests and
        benchmarks see all spend in the shared store."""
        now = self._clock()
        for lease in list(self._open.values()):
            if everything or now >= lease.deadline:
                self._close(lease)
        await self._drain()

    async def _lease_for(
        self, request: AdmitRequest, key: LeaseKey, demand: Demand
    ) -> tuple[Admission, Lease | None]:
        """A lease with room for the request. One lease call at a time per key: requests that
        arrive meanwhile wait for its outcome and then fit in it (or fail with it at once when
        the store is down, instead of queueing one timeout after another)."""
        while True:
            pending = self._pending.get(key)
            if pending is not None:
                await asyncio.shield(pending)  # BudgetUnavailable propagates to every waiter
                lease = self._open.get(key)
                if lease is not None and lease.fits(request, self._clock()):
                    return Admission(True), lease
                continue
            outcome: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            outcome.add_done_callback(_retrieve)
            self._pending[key] = outcome
            try:
                current = self._open.get(key)
                if current is not None:
                    self._close(current)
                admission, lease = await self._lease(request, demand, self._clock())
            except BudgetUnavailable as exc:
                outcome.set_exception(exc)
                raise
            finally:
                del self._pending[key]
                if not outcome.done():
                    outcome.set_result(None)
            return admission, lease

    async def _lease(
        self, request: AdmitRequest, demand: Demand, now: float
    ) -> tuple[Admission, Lease | None]:
        size = size_lease(request, demand, now, self._lease_s, self._max_requests, self._share)
        self.stats.leases += 1
        admission = await self._shared.admit(_lease_request(request, size))
        if not admission.admitted and size.requests > 1:
            # Too big to fit near a limit: ask for this request alone, and keep asking for
            # single requests for a while rather than being refused twice each time.
            demand.tight_until = now + 4 * self._lease_s
            size = LeaseSize(1, 1, request.cost_micro_usd, request.tokens)
            self.stats.leases += 1
            admission = await self._shared.admit(_lease_request(request, size))
        if not admission.admitted or admission.reservation is None:
            return admission, None
        lease = Lease(
            key=(request.tenant_id, request.scopes, request.day, request.month),
            reservation=admission.reservation, rate=admission.rate,
            soft=admission.soft_limit,
            deadline=now + (self._lease_s if size.requests > 1 else 0.0),
            usd_left=size.cost_micro_usd, tokens_left=size.tokens,
            requests_left=size.requests, slots_free=size.slots,
        )
        if size.requests > 1:
            self._open[lease.key] = lease
        else:
            lease.closed = True  # a lease of one: settled with its request
        return admission, lease

    def _close(self, lease: Lease) -> None:
        """No more admissions on it; settled (off the request path) once its requests are."""
        lease.closed = True
        if self._open.get(lease.key) is lease:
            del self._open[lease.key]
        if lease.in_flight == 0 and not lease.settling:
            lease.settling = True
            task = asyncio.create_task(self._settle_lease(lease))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    async def _settle_lease(self, lease: Lease) -> None:
        self.stats.settles += 1
        try:
            await self._shared.settle(lease.reservation, lease.spent_usd, lease.spent_tokens,
                                      requests_used=lease.used)
        except BudgetUnavailable as exc:
            self.stats.settle_failures += 1
            # Settle is idempotent by id: retried by the sweeper until the store is back (or
            # the lease's reservation expires there, which releases what it held).
            log.warning("budget lease %s not settled yet (%s); will retry",
                        lease.reservation.request_id, exc)
            self._unsettled.append(lease)

    async def _drain(self, *, retry: bool = True) -> None:
        """Wait for the settles under way; with `retry`, try the failed ones once more."""
        if self._settling:
            await asyncio.gather(*self._settling)
        if not retry:
            return
        pending, self._unsettled = self._unsettled, []
        for lease in pending:
            await self._settle_lease(lease)

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep(), name="budget-lease-sweeper")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._lease_s / 2)
            try:
                await self.flush()
            except Exception:  # the sweeper must outlive any one bad round
                log.exception("budget lease sweep failed")


def _retrieve(outcome: asyncio.Future[None]) -> None:
    # Waiters may all have gone (cancelled): the outcome is still retrieved, never logged.
    if not outcome.cancelled():
        outcome.exception()


def _lease_request(request: AdmitRequest, size: LeaseSize) -> AdmitRequest:
    return replace(request, request_id=f"lease:{uuid.uuid4().hex}",
                   cost_micro_usd=size.cost_micro_usd, tokens=size.tokens,
                   requests=size.requests, slots=size.slots)
