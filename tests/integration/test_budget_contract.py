"""One contract, two stores: every test runs on MemoryBudgetStore and on RedisBudgetStore."""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Awaitable, Callable

import pytest

from gateway.budget.limits import (
    Admission,
    BudgetLimits,
    BudgetUnavailable,
    RateLimits,
    Reservation,
    ScopeLimits,
    period_end_unix_s,
    periods,
)
from gateway.budget.redis_store import RedisBudgetStore, make_client
from tests.integration import budget_fixtures

# Fixtures live in budget_fixtures.py; binding them here registers them with pytest.
tenant = budget_fixtures.tenant
make_store = budget_fixtures.make_store
StoreFactory = budget_fixtures.StoreFactory
TTL_S, PAST_TTL_S = budget_fixtures.TTL_S, budget_fixtures.PAST_TTL_S
ask, budget, rate, usage = (budget_fixtures.ask, budget_fixtures.budget, budget_fixtures.rate,
                            budget_fixtures.usage)


def waits(retry_s: float | None, full_wait_s: float, started: float) -> None:
    """The wait is `full_wait_s` less what refilled since `started` (a second per second)."""
    assert retry_s is not None
    assert full_wait_s - (time.monotonic() - started) - 0.01 <= retry_s <= full_wait_s + 1e-6


def refused(admission: Admission, reason: str, scope: str = "tenant") -> float | None:
    assert (admission.admitted, admission.reason, admission.scope) == (False, reason, scope)
    assert admission.reservation is None
    return admission.retry_after_s


REASON = {"daily_micro_usd": "daily_usd", "monthly_micro_usd": "monthly_usd",
          "daily_tokens": "daily_tokens", "monthly_tokens": "monthly_tokens"}


@pytest.mark.parametrize("cap", list(REASON))
async def test_budget_refuses_what_does_not_fit_and_stops_hard_at_the_cap(
    make_store: StoreFactory, tenant: str, cap: str
) -> None:
    store = make_store(900.0)
    scope = budget(**{cap: 1000})
    a = await store.admit(ask(tenant, scope, cost=600, tokens=600))
    # 600 reserved + 401 > 1000, but spend alone is below the cap: no period-long stop
    assert refused(await store.admit(ask(tenant, scope, cost=401, tokens=401)), REASON[cap]) \
        is None
    b = await store.admit(ask(tenant, scope, cost=400, tokens=400))
    assert a.reservation is not None and b.reservation is not None
    await store.settle(a.reservation, 650, 650)  # over its estimate: 650 + 400 held > 1000
    assert (await store.admit(ask(tenant, scope))).admitted  # free fits while spend < cap
    refused(await store.admit(ask(tenant, scope, cost=1, tokens=1)), REASON[cap])
    await store.settle(b.reservation, 349, 349)
    refused(await store.admit(ask(tenant, scope, cost=2, tokens=2)), REASON[cap])
    c = await store.admit(ask(tenant, scope, cost=1, tokens=1))  # exactly at the cap fits
    assert c.reservation is not None
    await store.settle(c.reservation, 1, 1)  # spend reached the cap: the hard stop
    retry_s = refused(await store.admit(ask(tenant, scope)), REASON[cap])
    day, month = periods(time.time())
    until_end = period_end_unix_s(day if cap.startswith("daily") else month) - time.time()
    assert retry_s is not None and abs(retry_s - until_end) < 5


async def test_refusal_by_one_scope_reserves_nothing_in_the_others(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    roomy = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=10_000),
                        RateLimits(rpm=1, tpm=100, concurrent=1))
    tight = ScopeLimits("key:k1", BudgetLimits(daily_micro_usd=100))
    refused(await store.admit(ask(tenant, roomy, tight, cost=500, tokens=60)), "daily_usd",
            "key:k1")
    assert await usage(store, tenant) == (0, 0, 0, 0, 0, 0, 0)
    assert await usage(store, tenant, "key:k1") == (0, 0, 0, 0, 0, 0, 0)
    # The tenant's one request per minute, its tokens and its concurrency slot are untouched.
    assert (await store.admit(ask(tenant, roomy, cost=500, tokens=100))).admitted
    # And a rate refusal is atomic too: the first scope's tokens stay in its bucket.
    limited = rate("key:k2", rpm=1)
    tokens = rate("tag:t", tpm=100)
    assert (await store.admit(ask(tenant, tokens, limited, tokens=10))).admitted
    refused(await store.admit(ask(tenant, tokens, limited, tokens=50)), "rpm", "key:k2")
    assert (await store.admit(ask(tenant, tokens, tokens=90))).admitted


async def test_soft_limit_is_flagged_once_the_fraction_is_reached(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=1000, monthly_tokens=10_000,
                                               soft_fraction=0.8))
    assert not (await store.admit(ask(tenant, scope, cost=700, tokens=10))).soft_limit
    assert (await store.admit(ask(tenant, scope, cost=100, tokens=10))).soft_limit  # 800
    tokens_only = ScopeLimits("key:k", BudgetLimits(monthly_tokens=100, soft_fraction=0.5))
    assert not (await store.admit(ask(tenant, tokens_only, tokens=49))).soft_limit
    assert (await store.admit(ask(tenant, tokens_only, tokens=1))).soft_limit


async def test_rpm_refusal_says_when_a_request_fits_again(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(rpm=2)
    started = time.monotonic()
    for _ in range(2):
        assert (await store.admit(ask(tenant, scope))).admitted
    retry_s = refused(await store.admit(ask(tenant, scope)), "rpm")
    waits(retry_s, 30.0, started)  # one request refills in 60/2 s


async def test_tpm_refusal_and_an_oversized_request_that_leaves_debt(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(tpm=600)  # 10 tokens a second
    started = time.monotonic()
    assert (await store.admit(ask(tenant, scope, tokens=500))).admitted
    retry_s = refused(await store.admit(ask(tenant, scope, tokens=200)), "tpm")
    waits(retry_s, 10.0, started)  # a deficit of 100 tokens
    assert (await store.admit(ask(tenant, scope, tokens=99))).admitted
    # Larger than the whole bucket: it waits for a full bucket, then runs into debt.
    big = rate("key:big", tpm=600)
    started = time.monotonic()
    assert (await store.admit(ask(tenant, big, tokens=1000))).admitted
    retry_s = refused(await store.admit(ask(tenant, big)), "tpm", "key:big")
    waits(retry_s, 40.0, started)  # 400 tokens of debt


async def test_rate_refusal_reports_the_longest_wait(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    both = rate(rpm=1, tpm=60)  # one request a minute, one token a second
    assert (await store.admit(ask(tenant, both, tokens=30))).admitted
    retry_s = refused(await store.admit(ask(tenant, both, tokens=50)), "rpm")
    assert retry_s is not None and retry_s > 40.0  # the rpm's minute, not the tokens' 20 s
    tokens, requests = rate("key:t", tpm=60), rate("key:r", rpm=1)
    assert (await store.admit(ask(tenant, tokens, requests, tokens=30))).admitted
    retry_s = refused(await store.admit(ask(tenant, tokens, requests, tokens=50)), "rpm",
                      "key:r")
    assert retry_s is not None and retry_s > 40.0


async def test_concurrency_limit_counts_unsettled_reservations(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(concurrent=2)
    first = await store.admit(ask(tenant, scope))
    assert (await store.admit(ask(tenant, scope))).admitted
    assert refused(await store.admit(ask(tenant, scope)), "concurrent") == 1.0
    assert first.reservation is not None
    await store.settle(first.reservation, 0, 0)
    assert (await store.admit(ask(tenant, scope))).admitted


async def test_rate_state_reports_the_tightest_bucket(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    admission = await store.admit(ask(
        tenant, rate(rpm=100, tpm=10_000), rate("key:k", rpm=5, tpm=50_000), tokens=1000))
    state = admission.rate
    assert state is not None
    assert (state.limit_requests, state.remaining_requests) == (5, 4)
    assert (state.limit_tokens, state.remaining_tokens) == (10_000, 9000)
    assert state.reset_requests_s is not None and 11.9 < state.reset_requests_s <= 12.0
    assert state.reset_tokens_s is not None and 5.9 < state.reset_tokens_s <= 6.0
    assert (await store.admit(ask(tenant, budget(daily_micro_usd=5)))).rate is None


async def test_settle_corrects_the_tpm_bucket_both_ways(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scope = rate(tpm=600)
    started = time.monotonic()
    first = await store.admit(ask(tenant, scope, tokens=100))
    assert first.reservation is not None
    await store.settle(first.reservation, 0, 400)  # used 300 more than estimated
    retry_s = refused(await store.admit(ask(tenant, scope, tokens=300)), "tpm")
    waits(retry_s, 10.0, started)  # 200 left, 100 short
    under = rate("key:k", tpm=600)
    second = await store.admit(ask(tenant, under, tokens=600))
    assert second.reservation is not None
    await store.settle(second.reservation, 0, 0)  # used nothing: the tokens come back
    assert (await store.admit(ask(tenant, under, tokens=600))).admitted


async def test_settle_is_idempotent_and_records_every_scope(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    scopes = (budget(daily_micro_usd=10_000), ScopeLimits("tag:batch"))
    admission = await store.admit(ask(tenant, *scopes, cost=100, tokens=10))
    assert admission.reservation is not None
    assert await usage(store, tenant, "tag:batch") == (0, 0, 0, 0, 100, 10, 1)
    for _ in range(3):
        await store.settle(admission.reservation, 80, 8)
    for scope in ("tenant", "tag:batch"):
        assert await usage(store, tenant, scope) == (80, 80, 8, 8, 0, 0, 0)


async def test_a_retried_admit_holds_the_reservation_once(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    request = ask(tenant, budget(daily_micro_usd=150), cost=100)
    assert (await store.admit(request)).admitted
    assert (await store.admit(request)).admitted
    assert await usage(store, tenant) == (0, 0, 0, 0, 100, 0, 1)


async def test_expiry_releases_budget_and_concurrency(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(TTL_S)
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=100), RateLimits(concurrent=1))
    assert (await store.admit(ask(tenant, scope, cost=100))).admitted
    refused(await store.admit(ask(tenant, scope, cost=1)), "daily_usd")
    await asyncio.sleep(PAST_TTL_S)  # the replica holding it "crashed": nobody settles
    assert (await store.admit(ask(tenant, scope, cost=100))).admitted
    assert await usage(store, tenant) == (0, 0, 0, 0, 100, 0, 1)
    await asyncio.sleep(PAST_TTL_S)
    assert await usage(store, tenant) == (0, 0, 0, 0, 0, 0, 0)


async def test_settle_after_expiry_records_the_spend_exactly_once(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(TTL_S)
    admission = await store.admit(ask(tenant, ScopeLimits("tenant"), cost=100, tokens=10))
    other = await store.admit(ask(tenant, ScopeLimits("tenant"), cost=5, tokens=1))
    assert admission.reservation is not None and other.admitted
    await asyncio.sleep(PAST_TTL_S)
    await store.settle(admission.reservation, 70, 7)
    await store.settle(admission.reservation, 70, 7)
    assert await usage(store, tenant) == (70, 70, 7, 7, 0, 0, 0)


async def test_concurrent_admits_never_overspend(make_store: StoreFactory, tenant: str) -> None:
    store = make_store(900.0)
    scopes = (budget(daily_micro_usd=1000), rate("key:k", concurrent=150))
    admissions = await asyncio.gather(
        *(store.admit(ask(tenant, *scopes, cost=7)) for _ in range(200)))
    assert sum(a.admitted for a in admissions) == 1000 // 7
    assert await usage(store, tenant) == (0, 0, 0, 0, 994, 0, 142)
    slots = rate("key:c", concurrent=50)
    admissions = await asyncio.gather(*(store.admit(ask(tenant, slots)) for _ in range(200)))
    assert sum(a.admitted for a in admissions) == 50
    assert {a.reason for a in admissions if not a.admitted} == {"concurrent"}


async def test_random_sequences_match_a_reference_model(
    make_store: StoreFactory, tenant: str
) -> None:
    store = make_store(900.0)
    rng = random.Random(20240611)
    caps = {"tenant": 5000, "key:a": 2000, "tag:x": 1500}
    spent = dict.fromkeys(caps, 0)
    reserved = dict.fromkeys(caps, 0)
    open_: list[Reservation] = []
    for _ in range(300):
        if open_ and rng.random() < 0.4:
            reservation = open_.pop(rng.randrange(len(open_)))
            actual = rng.randrange(0, 400)
            await store.settle(reservation, actual, 0)
            for scope in reservation.scopes:
                reserved[scope] -= reservation.cost_micro_usd
                spent[scope] += actual
            continue
        names = ["tenant", *rng.sample(["key:a", "tag:x"], rng.randrange(3))]
        cost = rng.choice([0, rng.randrange(1, 300)])
        blocked = next((s for s in names if spent[s] >= caps[s] or (
            cost > 0 and spent[s] + reserved[s] + cost > caps[s])), None)
        scopes = [ScopeLimits(s, BudgetLimits(daily_micro_usd=caps[s])) for s in names]
        admission = await store.admit(ask(tenant, *scopes, cost=cost))
        assert (admission.admitted, admission.scope) == (blocked is None, blocked)
        if admission.reservation is not None:
            open_.append(admission.reservation)
            for s in names:
                reserved[s] += cost
    for scope in caps:
        assert (await usage(store, tenant, scope))[::4] == (spent[scope], reserved[scope])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def fastest_failure_s(call: Callable[[], Awaitable[object]]) -> float:
    """The quickest of three attempts, each of which must raise BudgetUnavailable: a real
    hang (retries, a missing timeout) slows every attempt, a stall of a busy machine one."""
    took = []
    for _ in range(3):
        started = time.perf_counter()
        with pytest.raises(BudgetUnavailable):
            await call()
        took.append(time.perf_counter() - started)
    return min(took)


async def test_unreachable_redis_raises_budget_unavailable_fast() -> None:
    store = RedisBudgetStore.from_url(f"redis://127.0.0.1:{closed_port()}/0")
    request = ask("t-down", budget(daily_micro_usd=10))
    reservation = Reservation("r", "t-down", ("tenant",), 1, 1, request.day, request.month)
    assert await fastest_failure_s(lambda: store.admit(request)) < 1.0
    assert await fastest_failure_s(lambda: store.settle(reservation, 1, 1)) < 1.0
    assert await fastest_failure_s(
        lambda: store.usage("t-down", "tenant", request.day, request.month)) < 1.0
    await store.close()


async def test_a_redis_that_never_answers_times_out_as_budget_unavailable() -> None:
    handlers: list[asyncio.Task[object]] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.append(task)
        await reader.read(-1)  # read everything, answer nothing, until the client hangs up
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = make_client(f"redis://127.0.0.1:{port}/0", timeout_s=0.25)
    store = RedisBudgetStore(client)
    request = ask("t-silent", budget(daily_micro_usd=10))
    assert await fastest_failure_s(lambda: store.admit(request)) < 1.0
    await client.aclose()
    server.close()
    await asyncio.wait_for(asyncio.gather(*handlers), timeout=5.0)
    await server.wait_closed()
