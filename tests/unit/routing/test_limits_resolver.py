"""The limits resolver builds a request's scopes once per (tenant, key, tags) and specs: the
same limits come back while nothing changed, new ones after a reload or an admin change."""

from __future__ import annotations

import asyncio

from gateway.policy.loader import parse_policy
from gateway.routing.limits import LimitsResolver
from gateway.types import TenantContext

ACME = TenantContext(tenant_id="t1", tenant_name="acme", key_id="k1")
POLICY_YAML = """
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9/v1", model: m, context_window: 4096}
tenants:
  acme:
    budget: {daily_usd: DAILY}
    limits: {rpm: 60}
    per_key: {limits: {rpm: 10}}
    tags: {team-a: {budget: {monthly_usd: 3}}}
"""


def policy(daily_usd: float) -> object:
    return parse_policy(POLICY_YAML.replace("DAILY", str(daily_usd)))


class Overrides:
    def __init__(self) -> None:
        self.rows: dict[str, tuple[dict[str, object] | None, None]] = {}

    async def __call__(self, _: str) -> dict[str, tuple[dict[str, object] | None, None]]:
        return dict(self.rows)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_request_gets_its_tenant_key_and_tag_scopes() -> None:
    resolver = LimitsResolver(Overrides(), ttl_s=5, clock=Clock())  # type: ignore[arg-type]
    p = policy(5.0)
    first = await resolver.scopes(p, ACME, ("team-a",))  # type: ignore[arg-type]
    assert await resolver.scopes(p, ACME, ("team-a",)) == first  # type: ignore[arg-type]
    assert [s.scope for s in first] == ["tenant", "key:k1", "tag:team-a"]
    untagged = await resolver.scopes(p, ACME, ())  # type: ignore[arg-type]
    assert [s.scope for s in untagged] == ["tenant", "key:k1"]
    other_key = TenantContext(tenant_id="t1", tenant_name="acme", key_id="k2")
    assert (await resolver.scopes(p, other_key, ()))[1].scope == "key:k2"  # type: ignore[arg-type]


async def test_a_reloaded_policy_is_read_again() -> None:
    resolver = LimitsResolver(Overrides(), ttl_s=5, clock=Clock())  # type: ignore[arg-type]
    before = await resolver.scopes(policy(5.0), ACME, ())  # type: ignore[arg-type]
    after = await resolver.scopes(policy(7.0), ACME, ())  # type: ignore[arg-type]
    assert before[0].budget is not None and before[0].budget.daily_micro_usd == 5_000_000
    assert after[0].budget is not None and after[0].budget.daily_micro_usd == 7_000_000


async def test_an_admin_change_is_read_after_invalidation_and_after_the_ttl() -> None:
    db, clock = Overrides(), Clock()
    resolver = LimitsResolver(db, ttl_s=5, clock=clock)  # type: ignore[arg-type]
    p = policy(5.0)
    await resolver.scopes(p, ACME, ())  # type: ignore[arg-type]
    db.rows["tenant"] = ({"daily_usd": 9.0}, None)
    resolver.invalidate("t1")
    found = await resolver.scopes(p, ACME, ())  # type: ignore[arg-type]
    assert found[0].budget is not None and found[0].budget.daily_micro_usd == 9_000_000
    db.rows["tenant"] = ({"daily_usd": 11.0}, None)
    clock.now = 6.0
    found = await resolver.scopes(p, ACME, ())  # type: ignore[arg-type]
    assert found[0].budget is not None and found[0].budget.daily_micro_usd == 11_000_000


class SlowOverrides(Overrides):
    """Counts the reads; each waits until released, as a query in flight does."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.release = asyncio.Event()

    async def __call__(self, tenant_id: str) -> dict[str, tuple[dict[str, object] | None, None]]:
        self.reads += 1
        await self.release.wait()
        return await super().__call__(tenant_id)


async def test_requests_arriving_during_a_read_share_it() -> None:
    overrides, clock = SlowOverrides(), Clock()
    resolver = LimitsResolver(overrides, ttl_s=5, clock=clock)  # type: ignore[arg-type]
    p = policy(5.0)
    waiting = [asyncio.ensure_future(resolver.scopes(p, ACME, ()))  # type: ignore[arg-type]
               for _ in range(16)]
    await asyncio.sleep(0)
    waiting[0].cancel()  # a client that left does not cancel the others' read
    overrides.release.set()
    answers = await asyncio.gather(*waiting[1:])
    assert overrides.reads == 1
    assert all(a == answers[0] for a in answers)
    clock.now = 6.0  # expired: read again, once
    overrides.rows["tenant"] = ({"daily_usd": 9.0}, None)
    again = await asyncio.gather(*(resolver.scopes(p, ACME, ())  # type: ignore[arg-type]
                                   for _ in range(8)))
    assert overrides.reads == 2
    assert all(a[0].budget is not None and a[0].budget.daily_micro_usd == 9_000_000
               for a in again)
