"""Fleet breaker, budget store, key authenticator cache and key hashing."""

import pytest

from gateway.budget.store import MemoryBudgetStore
from gateway.scraper.fleet import FleetState
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.keys import KEY_PREFIX, generate_key, hash_key
from gateway.types import TenantContext


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_after_consecutive_failures_and_half_opens_after_cooldown():
    clock = Clock()
    fleet = FleetState(failures_to_open=2, cooldown_s=5, clock=clock)
    fleet.record_failure("a")
    assert fleet.snapshot().is_healthy("a")
    fleet.record_failure("a")
    assert not fleet.snapshot().is_healthy("a")
    clock.now += 5.1
    assert fleet.snapshot().is_healthy("a")  # half-open: may be tried again
    fleet.record_success("a")
    assert fleet.snapshot().health == {}


async def test_budget_reserve_settle_is_idempotent_and_reservations_expire():
    clock = Clock()
    store = MemoryBudgetStore(reservation_ttl_s=60, clock=clock)
    r1 = await store.reserve("req1", "t", 5000)
    assert await store.spent_today("t") == 5000
    await store.settle(r1, 1200)
    await store.settle(r1, 1200)  # retried settle: no double charge
    assert await store.spent_today("t") == 1200
    await store.reserve("req2", "t", 9000)  # a replica that crashed before settling
    clock.now += 61
    assert await store.spent_today("t") == 1200


async def test_authenticator_caches_hits_and_misses():
    calls: list[str] = []
    tenant = TenantContext("t", "acme", "k")

    async def lookup(key: str) -> TenantContext | None:
        calls.append(key)
        return tenant if key == "good" else None

    clock = Clock()
    auth = KeyAuthenticator(lookup, ttl_s=30, clock=clock)
    assert await auth.authenticate("good") is tenant
    assert await auth.authenticate("good") is tenant
    assert await auth.authenticate("bad") is None
    assert await auth.authenticate("bad") is None
    assert calls == ["good", "bad"]
    clock.now += 31
    await auth.authenticate("good")
    assert calls == ["good", "bad", "good"]


@pytest.mark.parametrize("pepper", [None, b"pepper"])
def test_keys_are_random_and_hashes_deterministic(pepper):
    key = generate_key()
    assert key.startswith(KEY_PREFIX) and len(key) > 40
    assert generate_key() != key
    assert hash_key(key, pepper) == hash_key(key, pepper)
    assert len(hash_key(key, pepper)) == 64
    assert hash_key(key, b"other") != hash_key(key, None)
