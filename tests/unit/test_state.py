"""Key authenticator cache and key hashing."""

import pytest

from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.keys import KEY_PREFIX, generate_key, hash_key
from gateway.types import TenantContext


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


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
