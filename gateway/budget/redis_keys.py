"""Names of the Redis keys of one tenant's budgets. Every key carries the hash tag
`{tenant_id}`, so one tenant's keys share a Redis Cluster slot and one script may touch them."""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "gw:budget"


@dataclass(frozen=True, slots=True)
class TenantKeys:
    """The keys every script of a tenant declares: held amounts per scope, reservations by
    request id, and the reservations' expiry index."""

    held: str
    reservations: str
    expiry: str


def tenant_keys(tenant_id: str, prefix: str = PREFIX) -> TenantKeys:
    base = f"{prefix}:{{{tenant_id}}}"
    return TenantKeys(f"{base}:held", f"{base}:res", f"{base}:exp")


# The scope comes last: period and kind have a fixed shape, so no scope name (a tag may hold
# any character) can make two keys collide.
def day_key(tenant_id: str, day: str, scope: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{{tenant_id}}}:d:{day}:{scope}"


def month_key(tenant_id: str, month: str, scope: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{{tenant_id}}}:m:{month}:{scope}"


def bucket_key(tenant_id: str, scope: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{{tenant_id}}}:b:{scope}"


def settled_key(tenant_id: str, request_id: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{{tenant_id}}}:s:{request_id}"


def hash_tag(key: str) -> str:
    """The part of a key Redis Cluster hashes (its rule: between the first '{' and the next '}')."""
    start = key.find("{")
    end = key.find("}", start + 1)
    if start < 0 or end < 0 or end == start + 1:
        return key
    return key[start + 1:end]
