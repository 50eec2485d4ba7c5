"""While the database is away, keys and admin limits known a moment ago keep serving; what
was never seen gets a 503, not a guess."""

from __future__ import annotations

import pytest

from gateway.errors import DatabaseUnavailable
from gateway.policy.loader import parse_policy
from gateway.routing.limits import LimitsResolver
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.types import TenantContext

ACME = TenantContext(tenant_id="t1", tenant_name="acme", key_id="k1")
POLICY = parse_policy("""
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9/v1", model: m, context_window: 4096}
""")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FlakyDatabase:
    def __init__(self, value: object) -> None:
        self.value, self.down, self.calls = value, False, 0

    async def __call__(self, _: str) -> object:
        self.calls += 1
        if self.down:
            raise DatabaseUnavailable("down")
        return self.value


async def test_a_known_key_outlives_its_ttl_while_the_database_is_down() -> None:
    clock, db = Clock(), FlakyDatabase(ACME)
    auth = KeyAuthenticator(db, ttl_s=30, clock=clock)  # type: ignore[arg-type]
    assert await auth.authenticate("sk-1") == ACME
    db.down, clock.now = True, 100.0
    assert await auth.authenticate("sk-1") == ACME
    assert await auth.authenticate("sk-1") == ACME
    assert db.calls == 2  # re-checked once, then not per request
    clock.now = 103.0
    assert await auth.authenticate("sk-1") == ACME and db.calls == 3
    with pytest.raises(DatabaseUnavailable):
        await auth.authenticate("sk-never-seen")


async def test_last_known_limits_serve_while_the_database_is_down() -> None:
    clock = Clock()
    db = FlakyDatabase({"tenant": ({"daily_usd": 5.0}, None)})
    resolver = LimitsResolver(db, ttl_s=5, clock=clock)  # type: ignore[arg-type]
    before = await resolver.scopes(POLICY, ACME, ())
    db.down, clock.now = True, 60.0
    assert await resolver.scopes(POLICY, ACME, ()) == before
    assert before[0].budget is not None and before[0].budget.daily_micro_usd == 5_000_000
    other = TenantContext(tenant_id="t2", tenant_name="globex", key_id="k2")
    with pytest.raises(DatabaseUnavailable):
        await resolver.scopes(POLICY, other, ())
