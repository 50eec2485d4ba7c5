"""LeasingBudgetStore over both shared stores (memory, and Redis as replicas share it):
requests are admitted locally from leases, and every limit still holds across replicas."""

from __future__ import annotations

import asyncio
import itertools

from gateway.budget.leasing import LeasingBudgetStore
from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    BudgetLimits,
    RateLimits,
    Reservation,
    ScopeLimits,
    ScopeUsage,
)
from gateway.budget.store import BudgetStore
from tests.integration import budget_fixtures

tenant = budget_fixtures.tenant
make_store = budget_fixtures.make_store
StoreFactory = budget_fixtures.StoreFactory
ask, usage = budget_fixtures.ask, budget_fixtures.usage
TTL_S, PAST_TTL_S = budget_fixtures.TTL_S, budget_fixtures.PAST_TTL_S


class Counted:
    """The shared store, with a count of the calls that reach it."""

    def __init__(self, inner: BudgetStore) -> None:
        self.inner, self.admits, self.settles = inner, 0, 0

    async def admit(self, request: AdmitRequest) -> Admission:
        self.admits += 1
        return await self.inner.admit(request)

    async def settle(self, reservation: Reservation, actual_micro_usd: int, actual_tokens: int,
                     requests_used: int | None = None) -> None:
        self.settles += 1
        await self.inner.settle(reservation, actual_micro_usd, actual_tokens, requests_used)

    async def usage(self, tenant_id: str, scope: str, day: str, month: str) -> ScopeUsage:
        return await self.inner.usage(tenant_id, scope, day, month)

    async def close(self) -> None:
        await self.inner.close()


def ticking(step_s: float) -> object:
    """A monotonic clock that moves `step_s` each time it is read: a steady request rate."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


async def test_a_steady_stream_reaches_the_shared_store_once_per_lease(
    make_store: StoreFactory, tenant: str
) -> None:
    shared = Counted(make_store(900.0))
    store = LeasingBudgetStore(shared, clock=ticking(0.0005))  # type: ignore[arg-type]
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=10**9), RateLimits(rpm=10**6))
    for _ in range(1000):
        admission = await store.admit(ask(tenant, scope, cost=1000, tokens=100))
        assert admission.admitted and admission.reservation is not None
        await store.settle(admission.reservation, 600, 60)
    await store.flush(everything=True)
    assert shared.admits < 1000 / 10, shared.admits
    assert shared.admits == shared.settles
    assert await usage(shared, tenant) == (600_000, 600_000, 60_000, 60_000, 0, 0, 0)
    await store.close()


async def test_replicas_never_overspend_and_settle_every_request(
    make_store: StoreFactory, tenant: str
) -> None:
    shared = make_store(900.0)
    replicas = [LeasingBudgetStore(shared, lease_s=0.2) for _ in range(2)]
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=200_000))
    admitted = 0

    async def client(store: LeasingBudgetStore) -> None:
        nonlocal admitted
        while True:
            admission = await store.admit(ask(tenant, scope, cost=1000, tokens=10))
            if not admission.admitted:
                return
            admitted += 1
            assert admission.reservation is not None
            await asyncio.sleep(0)
            await store.settle(admission.reservation, 700, 7)

    await asyncio.gather(*(client(r) for r in replicas for _ in range(16)))
    for replica in replicas:
        await replica.flush(everything=True)
    spent, _, tokens, _, reserved, _, in_flight = await usage(shared, tenant)
    assert (spent, tokens, reserved, in_flight) == (700 * admitted, 7 * admitted, 0, 0)
    assert spent <= 200_000
    assert admitted >= 150  # no starvation: leases give way to single requests near the cap
    hard = await replicas[0].admit(ask(tenant, scope, cost=100_000))
    assert not hard.admitted and hard.reason == "daily_usd"


async def test_rpm_holds_across_replicas(make_store: StoreFactory, tenant: str) -> None:
    shared = make_store(900.0)
    replicas = [LeasingBudgetStore(shared) for _ in range(3)]
    scope = ScopeLimits("key:k", None, RateLimits(rpm=120))
    for replica in replicas:  # warm each replica's demand so it asks for real leases
        for _ in range(5):
            await replica.admit(ask(tenant, scope))
        await asyncio.sleep(0.5)
    answers = await asyncio.gather(
        *(r.admit(ask(tenant, scope)) for r in replicas for _ in range(100)))
    # 15 warm-up requests, refill of 2 per second while the test runs
    assert 15 + sum(a.admitted for a in answers) <= 120 + 2 * 3
    assert {a.reason for a in answers if not a.admitted} == {"rpm"}


async def test_a_crashed_replicas_leases_expire(make_store: StoreFactory, tenant: str) -> None:
    shared = make_store(TTL_S)
    crashed = LeasingBudgetStore(shared, clock=ticking(0.001))  # type: ignore[arg-type]
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=1_000_000), RateLimits(rpm=600))
    for _ in range(200):  # a busy replica holds a lease when it dies (nothing settles)
        await crashed.admit(ask(tenant, scope, cost=1000))
    assert (await usage(shared, tenant))[4] > 0
    await asyncio.sleep(PAST_TTL_S)
    assert await usage(shared, tenant) == (0, 0, 0, 0, 0, 0, 0)


async def test_retried_admit_and_settle_count_once(make_store: StoreFactory, tenant: str) -> None:
    shared = make_store(900.0)
    store = LeasingBudgetStore(shared)
    request = ask(tenant, ScopeLimits("tenant", BudgetLimits(daily_micro_usd=10_000)),
                  cost=500, tokens=5)
    first = await store.admit(request)
    again = await store.admit(request)
    assert first.reservation == again.reservation is not None
    await store.settle(first.reservation, 400, 4)
    await store.settle(first.reservation, 400, 4)
    await store.flush(everything=True)
    assert await usage(shared, tenant) == (400, 400, 4, 4, 0, 0, 0)
    await store.close()
