"""Redis only: replicas configured with different reservation TTLs share a tenant's keys; a
short-TTL replica must never shorten the life of a long-TTL replica's holds."""

from __future__ import annotations

import time
import uuid

import pytest

from gateway.budget.limits import AdmitRequest, ScopeLimits, periods
from gateway.budget.redis_keys import PREFIX, tenant_keys
from gateway.budget.redis_store import RedisBudgetStore, make_client

pytestmark = pytest.mark.redis


async def test_a_shorter_ttl_never_shortens_the_shared_keys(redis_url: str) -> None:
    tenant = f"t-{uuid.uuid4().hex[:16]}"
    client = make_client(redis_url, timeout_s=5.0)
    long_ttl = RedisBudgetStore(client, reservation_ttl_s=600, op_timeout_s=10)
    short_ttl = RedisBudgetStore(client, reservation_ttl_s=1, op_timeout_s=10)
    day, month = periods(time.time())
    try:
        for store, rid in ((long_ttl, "r-long"), (short_ttl, "r-short")):
            admission = await store.admit(
                AdmitRequest(rid, tenant, (ScopeLimits("tenant"),), 100, 10, day, month)
            )
            assert admission.admitted
        keys = tenant_keys(tenant)
        for key in (keys.held, keys.reservations, keys.expiry):
            assert await client.pttl(key) > 600_000  # still the long replica's horizon
        usage = await long_ttl.usage(tenant, "tenant", day, month)
        assert usage.reserved_micro_usd == 200 and usage.in_flight == 2
    finally:
        stale = [k async for k in client.scan_iter(match=f"{PREFIX}:{{{tenant}}}:*")]
        if stale:
            await client.delete(*stale)
        await client.aclose()
