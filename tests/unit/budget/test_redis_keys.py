"""Every key of one tenant lands in one Redis Cluster slot, and no two keys collide."""

from __future__ import annotations

from gateway.budget import redis_keys as keys


def all_keys(tenant: str, scope: str) -> list[str]:
    tk = keys.tenant_keys(tenant)
    return [tk.held, tk.reservations, tk.expiry,
            keys.day_key(tenant, "2024-05-01", scope), keys.month_key(tenant, "2024-05", scope),
            keys.bucket_key(tenant, scope), keys.settled_key(tenant, "req-1")]


def test_one_tenant_shares_one_hash_tag() -> None:
    for scope in ("tenant", "key:k1", "tag:a}b{c"):
        assert {keys.hash_tag(k) for k in all_keys("acme:eu", scope)} == {"acme:eu"}


def test_keys_are_distinct_across_tenants_scopes_and_kinds() -> None:
    made = [k for t in ("a", "b") for s in ("tenant", "key:x", "tag:x") for k in all_keys(t, s)]
    # The tenant-wide keys repeat once per scope; everything else must be unique.
    assert len(set(made)) == len(made) - 2 * 2 * (3 + 1)
