"""Leases in both stores' contract: an admission may take several rpm permits and
concurrency slots at once, and settle gives unused permits back. One lease of N is
equivalent to N single requests for every limit it touches."""

from __future__ import annotations

from dataclasses import replace

from gateway.budget.limits import BudgetLimits, RateLimits, ScopeLimits
from tests.integration import budget_fixtures

tenant = budget_fixtures.tenant
make_store = budget_fixtures.make_store
StoreFactory = budget_fixtures.StoreFactory
ask, rate, usage = budget_fixtures.ask, budget_fixtures.rate, budget_fixtures.usage


async def test_a_lease_takes_its_permits_and_unused_ones_come_back(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(rpm=10)
    lease = await store.admit(replace(ask(tenant, scope), requests=8))
    assert lease.admitted and lease.rate is not None
    assert lease.rate.remaining_requests == 2
    refused = await store.admit(replace(ask(tenant, scope), requests=3))
    assert not refused.admitted and refused.reason == "rpm"
    assert lease.reservation is not None and lease.reservation.requests == 8
    await store.settle(lease.reservation, 0, 0, requests_used=3)  # 5 permits come back
    again = await store.admit(replace(ask(tenant, scope), requests=7))
    assert again.admitted and again.rate is not None
    assert again.rate.remaining_requests == 0


async def test_settle_without_a_count_keeps_every_permit_used(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(rpm=10)
    lease = await store.admit(replace(ask(tenant, scope), requests=10))
    assert lease.reservation is not None
    await store.settle(lease.reservation, 0, 0)
    assert not (await store.admit(ask(tenant, scope))).admitted


async def test_a_lease_holds_its_slots_until_settled(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(concurrent=4)
    lease = await store.admit(replace(ask(tenant, scope), requests=10, slots=3))
    assert lease.admitted and lease.reservation is not None
    assert await usage(store, tenant) == (0, 0, 0, 0, 0, 0, 3)
    assert not (await store.admit(replace(ask(tenant, scope), slots=2))).admitted
    single = await store.admit(ask(tenant, scope))
    assert single.admitted
    assert (await store.admit(ask(tenant, scope))).reason == "concurrent"
    await store.settle(lease.reservation, 30, 3, requests_used=4)
    assert await usage(store, tenant) == (30, 30, 3, 3, 0, 0, 1)
    assert (await store.admit(replace(ask(tenant, scope), slots=3))).admitted


async def test_a_lease_is_refused_whole_when_its_budget_slice_does_not_fit(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=1000), RateLimits(rpm=100))
    refused = await store.admit(replace(ask(tenant, scope, cost=1200), requests=10))
    assert not refused.admitted and refused.reason == "daily_usd"
    assert await usage(store, tenant) == (0, 0, 0, 0, 0, 0, 0)
    assert (await store.admit(replace(ask(tenant, scope, cost=900), requests=10))).admitted
