"""Budget stores and request builders for the contract suite: the memory store always, Redis when
GATEWAY_TEST_REDIS_URL is set (a failure instead of a skip under GATEWAY_TEST_REQUIRE_SERVICES=1).
Each test gets its own tenant id; teardown deletes that tenant's keys and nothing else."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from gateway.budget.limits import AdmitRequest, BudgetLimits, RateLimits, ScopeLimits, periods
from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.redis_keys import PREFIX
from gateway.budget.redis_store import RedisBudgetStore, make_client
from gateway.budget.store import BudgetStore

# make_store(reservation_ttl_s) → a store. Call it once per test: Redis stores of one test
# share their state (like replicas), memory stores do not.
StoreFactory = Callable[[float], BudgetStore]


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:16]}"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def make_store(request: pytest.FixtureRequest, tenant: str) -> AsyncIterator[StoreFactory]:
    if request.param == "memory":
        yield lambda ttl_s=900.0: MemoryBudgetStore(reservation_ttl_s=ttl_s)
        return
    # Generous timeouts: a loaded CI machine must not turn a slow reply into a failed test.
    client = make_client(request.getfixturevalue("redis_url"), timeout_s=5.0)
    yield lambda ttl_s=900.0: RedisBudgetStore(
        client, reservation_ttl_s=ttl_s, op_timeout_s=10.0
    )
    stale = [key async for key in client.scan_iter(match=f"{PREFIX}:{{{tenant}}}:*")]
    if stale:
        await client.delete(*stale)
    await client.aclose()


_ids = iter(range(10**9))
# Expiry tests sleep past a short reservation TTL; long enough that a stall of a loaded
# machine between two calls does not expire a reservation early.
TTL_S = 1.0
PAST_TTL_S = 1.25


def ask(tenant: str, *scopes: ScopeLimits, cost: int = 0, tokens: int = 0) -> AdmitRequest:
    day, month = periods(time.time())
    return AdmitRequest(f"r{next(_ids)}", tenant, scopes, cost, tokens, day, month)


def budget(**caps: int) -> ScopeLimits:
    return ScopeLimits("tenant", BudgetLimits(**caps))


def rate(scope: str = "tenant", **limits: int) -> ScopeLimits:
    return ScopeLimits(scope, None, RateLimits(**limits))


async def usage(store: BudgetStore, tenant: str, scope: str = "tenant") -> tuple[int, ...]:
    day, month = periods(time.time())
    u = await store.usage(tenant, scope, day, month)
    return (u.spent_day_micro_usd, u.spent_month_micro_usd, u.tokens_day, u.tokens_month,
            u.reserved_micro_usd, u.reserved_tokens, u.in_flight)
