"""Keys this replica has verified, kept in the last-known file (db/last_known.py) so that a
restart while the database is down can still serve them (authenticator.py).

Only each key's hash is written (the same SHA-256 or HMAC the database stores), with its
tenant: the file lets nobody present a key. Revocations and tenant changes heard on the key
change channel, and any key the database refuses, are dropped from it.
"""

from __future__ import annotations

from gateway.db.last_known import LastKnownFile
from gateway.tenancy.keys import hash_key
from gateway.types import TenantContext

SECTION = "keys"


class KeyFile:
    def __init__(self, store: LastKnownFile, pepper: bytes | None) -> None:
        self._store = store
        self._pepper = pepper

    def __len__(self) -> int:
        return self._store.count(SECTION)

    def get(self, key: str, max_age_s: float) -> tuple[TenantContext, float] | None:
        found = self._store.get(SECTION, hash_key(key, self._pepper))
        if found is None or found[1] > max_age_s:
            return None
        (tenant_id, name, key_id, enabled), age_s = found
        return TenantContext(tenant_id=str(tenant_id), tenant_name=str(name),
                             key_id=str(key_id), enabled=bool(enabled)), age_s

    def verified(self, key: str, tenant: TenantContext) -> None:
        self._store.put(SECTION, hash_key(key, self._pepper),
                        [tenant.tenant_id, tenant.tenant_name, tenant.key_id, tenant.enabled])

    def refused(self, key: str) -> None:
        self._store.drop(SECTION, hash_key(key, self._pepper))

    def forget(self, change: dict[str, str]) -> None:
        key_id, tenant = change.get("key_id"), change.get("tenant")
        everything = key_id is None and tenant is None
        self._store.drop_where(SECTION, lambda value: everything or value[2] == key_id
                               or value[1] == tenant)
