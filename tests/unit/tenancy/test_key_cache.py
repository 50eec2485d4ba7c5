"""The key cache: push invalidation forgets exactly what a change touches, a key verified
too long ago is not served through an outage, and keys verified by an earlier run are served
from the persisted file (by hash; the file holds no key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.budget.last_known_limits import RememberedOverrides
from gateway.db.last_known import LastKnownFile
from gateway.errors import DatabaseUnavailable
from gateway.tenancy.authenticator import KeyAuthenticator
from gateway.tenancy.key_changes import listen_dsn
from gateway.tenancy.persisted import KeyFile
from gateway.types import TenantContext
from tests.unit.test_stale_on_database_outage import Clock, FlakyDatabase

ACME = TenantContext(tenant_id="t1", tenant_name="acme", key_id="k1")
BETA = TenantContext(tenant_id="t2", tenant_name="beta", key_id="k2")


class Keys:
    def __init__(self) -> None:
        self.tenants = {"sk-a": ACME, "sk-b": BETA}
        self.calls = 0
        self.down = False

    async def __call__(self, key: str) -> TenantContext | None:
        self.calls += 1
        if self.down:
            raise DatabaseUnavailable("down")
        return self.tenants.get(key)


@pytest.mark.parametrize("change", [{"key_id": "k1"}, {"tenant": "acme"}])
async def test_a_change_forgets_only_what_it_touches(change: dict[str, str]) -> None:
    keys = Keys()
    auth = KeyAuthenticator(keys, ttl_s=30)
    assert await auth.authenticate("sk-a") == ACME
    assert await auth.authenticate("sk-b") == BETA
    del keys.tenants["sk-a"]  # revoked in the database
    auth.forget(change)
    assert await auth.authenticate("sk-a") is None  # asked again at once, not after 30 s
    calls = keys.calls
    assert await auth.authenticate("sk-b") == BETA and keys.calls == calls  # still cached


async def test_an_unknown_change_forgets_everything() -> None:
    keys = Keys()
    auth = KeyAuthenticator(keys, ttl_s=30)
    await auth.authenticate("sk-b")
    auth.forget({})
    await auth.authenticate("sk-b")
    assert keys.calls == 2


async def test_through_an_outage_a_key_is_served_only_within_the_stale_limit() -> None:
    clock, db = Clock(), FlakyDatabase(ACME)
    auth = KeyAuthenticator(db, ttl_s=30, stale_s=600, clock=clock)  # type: ignore[arg-type]
    assert await auth.authenticate("sk-1") == ACME
    db.down, clock.now = True, 599.0
    assert await auth.authenticate("sk-1") == ACME
    assert auth.known_keys == 1
    clock.now = 602.0
    with pytest.raises(DatabaseUnavailable):
        await auth.authenticate("sk-1")
    assert auth.known_keys == 0


async def test_a_restart_without_the_database_serves_keys_a_previous_run_verified(
    tmp_path: Path,
) -> None:
    path = tmp_path / "last-known.json"
    keys = Keys()
    store = LastKnownFile(path)
    before = KeyFile(store, b"pepper")
    auth = KeyAuthenticator(keys, persisted=before)
    await auth.authenticate("sk-a")
    await auth.authenticate("sk-b")
    before.forget({"key_id": "k2"})  # revoked while this run was up
    await store.save()
    assert b"sk-a" not in path.read_bytes() and path.stat().st_mode & 0o777 == 0o600

    keys.down = True
    after = _loaded(path, b"pepper")
    clock = Clock()
    restarted = KeyAuthenticator(keys, persisted=after, clock=clock)
    assert restarted.known_keys == 1
    assert await restarted.authenticate("sk-a") == ACME
    with pytest.raises(DatabaseUnavailable):
        await restarted.authenticate("sk-b")
    with pytest.raises(DatabaseUnavailable):  # a different pepper: another gateway's file
        await KeyAuthenticator(keys, persisted=_loaded(path, b"other")).authenticate("sk-a")

    keys.down, clock.now = False, 2.5  # the database is back; the 2 s re-check is due
    del keys.tenants["sk-a"]  # revoked during the outage: refused once the database answers
    assert await restarted.authenticate("sk-a") is None
    assert len(after) == 0


def _loaded(path: Path, pepper: bytes | None, clock: Clock | None = None) -> KeyFile:
    store = LastKnownFile(path, clock=clock) if clock else LastKnownFile(path)
    store.load()
    return KeyFile(store, pepper)


async def test_a_key_the_file_verified_too_long_ago_is_not_served(tmp_path: Path) -> None:
    clock = Clock()
    keys = Keys()
    store = LastKnownFile(tmp_path / "k.json", clock=clock)
    await KeyAuthenticator(keys, persisted=KeyFile(store, None)).authenticate("sk-a")
    await store.save()
    clock.now = 7200.0
    keys.down = True
    auth = KeyAuthenticator(keys, stale_s=3600, persisted=_loaded(tmp_path / "k.json", None,
                                                                  clock))
    with pytest.raises(DatabaseUnavailable):
        await auth.authenticate("sk-a")


async def test_admin_limits_last_read_are_enforced_after_a_restart_without_the_database(
    tmp_path: Path,
) -> None:
    rows = {"tenant": ({"daily_usd": 5.0}, None), "key:k1": (None, {"rpm": 10})}
    down = False

    async def overrides(tenant_id: str) -> dict[str, tuple[object, object]]:
        if down:
            raise DatabaseUnavailable("down")
        return dict(rows)  # type: ignore[arg-type]

    store = LastKnownFile(tmp_path / "k.json")
    assert await RememberedOverrides(overrides, store, 3600)("t1") == rows  # type: ignore[arg-type]
    await store.save()
    down = True
    again = LastKnownFile(tmp_path / "k.json")
    again.load()
    remembered = RememberedOverrides(overrides, again, 3600)  # type: ignore[arg-type]
    assert await remembered("t1") == rows
    with pytest.raises(DatabaseUnavailable):  # never read: refused, not ignored
        await remembered("t2")


@pytest.mark.parametrize("url,dsn", [
    ("postgresql+asyncpg://u:p@db:5432/gw?ssl=require&prepared_statement_cache_size=0",
     "postgresql://u:p@db:5432/gw?sslmode=require"),
    ("postgresql+asyncpg://postgres@127.0.0.1/gw", "postgresql://postgres@127.0.0.1/gw"),
    ("sqlite+aiosqlite:///.gateway/gateway.db", None),
])
def test_the_listen_connection_uses_the_database_url(url: str, dsn: str | None) -> None:
    assert listen_dsn(url) == dsn
