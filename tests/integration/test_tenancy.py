"""Tenants and keys on a real database: only hashes stored, revocation, disabling."""

from __future__ import annotations

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.migrate import alembic_config, current_revision
from gateway.db.tables import api_keys
from gateway.tenancy.keys import hash_key
from gateway.tenancy.repository import TenantExists, TenantRepository


async def test_migrations_reach_head(engine: AsyncEngine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head == "0009" and await current_revision(engine) == head


async def test_key_lifecycle_stores_only_a_hash(engine: AsyncEngine) -> None:
    repo = TenantRepository(engine, pepper=b"p")
    tenant = await repo.ensure_tenant("acme")
    assert (await repo.ensure_tenant("acme")).id == tenant.id
    key, row = await repo.create_key(tenant, "ci")

    async with engine.connect() as conn:
        stored = (await conn.execute(select(api_keys))).mappings().all()
    assert len(stored) == 1
    assert key not in str(dict(stored[0]))  # the plaintext never reaches the database
    assert stored[0]["key_hash"] == hash_key(key, b"p")
    assert key.startswith(stored[0]["prefix"])

    found = await repo.lookup(key)
    assert found is not None and found.tenant_name == "acme" and found.key_id == row.id
    assert await repo.lookup(key + "x") is None
    assert await TenantRepository(engine, pepper=b"other").lookup(key) is None

    assert await repo.set_enabled("acme", False)
    disabled = await repo.lookup(key)
    assert disabled is not None and not disabled.enabled

    assert await repo.revoke_key(row.id)
    assert not await repo.revoke_key(row.id)
    assert await repo.lookup(key) is None
    listed = await repo.list_keys("acme")
    assert listed[0].revoked_at is not None


async def test_duplicate_tenants_are_refused(engine: AsyncEngine) -> None:
    repo = TenantRepository(engine)
    await repo.create_tenant("dup")
    with pytest.raises(TenantExists):
        await repo.create_tenant("dup")
    assert [t.name for t in await repo.list_tenants()] == ["dup"]
