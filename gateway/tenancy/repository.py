"""All SQL about tenants and API keys.

Revoking a key or enabling/disabling a tenant also sends a Postgres NOTIFY on
`CHANNEL` in the same transaction, so every replica's key cache hears of it the moment it is
committed, whichever process made the change (admin API, `gateway keys revoke`); see
key_changes.py. SQLite has no such channel: there the cache TTL applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import orjson
from sqlalchemy import select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.db.engine import database_errors
from gateway.db.tables import api_keys, tenants
from gateway.tenancy.keys import display_prefix, generate_key, hash_key, new_id
from gateway.types import TenantContext


@dataclass(frozen=True, slots=True)
class TenantRow:
    id: str
    name: str
    enabled: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class KeyRow:
    id: str
    tenant_id: str
    tenant_name: str
    prefix: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None


class TenantExists(Exception):
    pass


class TenantRepository:
    def __init__(self, engine: AsyncEngine, pepper: bytes | None = None) -> None:
        self._engine = engine
        self._pepper = pepper

    async def create_tenant(self, name: str) -> TenantRow:
        row = {"id": new_id(), "name": name, "enabled": True, "created_at": _now()}
        try:
            async with self._engine.begin() as conn:
                await conn.execute(tenants.insert().values(**row))
        except IntegrityError as exc:
            raise TenantExists(name) from exc
        return TenantRow(**row)

    async def get_tenant(self, name: str) -> TenantRow | None:
        async with self._engine.connect() as conn:
            result = await conn.execute(select(tenants).where(tenants.c.name == name))
            found = result.mappings().first()
        return TenantRow(**found) if found else None

    async def ensure_tenant(self, name: str) -> TenantRow:
        existing = await self.get_tenant(name)
        if existing is not None:
            return existing
        try:
            return await self.create_tenant(name)
        except TenantExists:  # created concurrently
            found = await self.get_tenant(name)
            assert found is not None
            return found

    async def list_tenants(self) -> list[TenantRow]:
        async with self._engine.connect() as conn:
            result = await conn.execute(select(tenants).order_by(tenants.c.name))
            return [TenantRow(**m) for m in result.mappings()]

    async def set_enabled(self, name: str, enabled: bool) -> bool:
        async with self._engine.begin() as conn:
            result = await conn.execute(
                update(tenants).where(tenants.c.name == name).values(enabled=enabled)
            )
            if result.rowcount > 0:
                await _announce(conn, {"tenant": name})
        return result.rowcount > 0

    async def create_key(self, tenant: TenantRow, name: str | None = None) -> tuple[str, KeyRow]:
        """Returns the plaintext key (shown once, never stored) and its row."""
        key = generate_key()
        row = {
            "id": new_id(),
            "tenant_id": tenant.id,
            "key_hash": hash_key(key, self._pepper),
            "prefix": display_prefix(key),
            "name": name,
            "created_at": _now(),
            "revoked_at": None,
        }
        async with self._engine.begin() as conn:
            await conn.execute(api_keys.insert().values(**row))
        del row["key_hash"]
        return key, KeyRow(tenant_name=tenant.name, **row)

    async def list_keys(self, tenant_name: str | None = None) -> list[KeyRow]:
        query = (
            select(
                api_keys.c.id, api_keys.c.tenant_id, tenants.c.name.label("tenant_name"),
                api_keys.c.prefix, api_keys.c.name, api_keys.c.created_at, api_keys.c.revoked_at,
            )
            .join(tenants, tenants.c.id == api_keys.c.tenant_id)
            .order_by(tenants.c.name, api_keys.c.created_at)
        )
        if tenant_name is not None:
            query = query.where(tenants.c.name == tenant_name)
        async with self._engine.connect() as conn:
            result = await conn.execute(query)
            return [KeyRow(**m) for m in result.mappings()]

    async def revoke_key(self, key_id: str) -> bool:
        async with self._engine.begin() as conn:
            result = await conn.execute(
                update(api_keys)
                .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
                .values(revoked_at=_now())
            )
            if result.rowcount > 0:
                await _announce(conn, {"key_id": key_id})
        return result.rowcount > 0

    async def lookup(self, key: str) -> TenantContext | None:
        """The tenant behind a presented key, or None if unknown or revoked."""
        query = (
            select(api_keys.c.id, tenants.c.id.label("tid"), tenants.c.name, tenants.c.enabled)
            .join(tenants, tenants.c.id == api_keys.c.tenant_id)
            .where(api_keys.c.key_hash == hash_key(key, self._pepper))
            .where(api_keys.c.revoked_at.is_(None))
        )
        async with database_errors("checking the API key"), self._engine.connect() as conn:
            found = (await conn.execute(query)).first()
        if found is None:
            return None
        return TenantContext(
            tenant_id=found.tid, tenant_name=found.name, key_id=found.id, enabled=found.enabled
        )


CHANNEL = "gateway_key_changes"


async def _announce(conn: AsyncConnection, change: dict[str, str]) -> None:
    """NOTIFY the change; Postgres delivers it only if the transaction commits."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("SELECT pg_notify(:channel, :payload)"),
                           {"channel": CHANNEL, "payload": orjson.dumps(change).decode()})


def _now() -> datetime:
    return datetime.now(UTC)
