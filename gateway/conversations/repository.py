"""All SQL about stored Responses API responses. Every read and delete is scoped to the
tenant that stored the response: another tenant's id reads as absent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import database_errors
from gateway.db.tables import stored_responses


@dataclass(frozen=True, slots=True)
class StoredResponse:
    id: str
    context: list[dict[str, Any]]  # the input items the response was given
    response: dict[str, Any]

    def conversation(self) -> list[dict[str, Any]]:
        """What a continuation builds on: the response's input, then its output."""
        return [*self.context, *self.response.get("output", ())]


class ResponseRepository:
    def __init__(self, engine: AsyncEngine, retention: timedelta) -> None:
        self._engine = engine
        self._retention = retention

    async def save(self, tenant_id: str, context: list[dict[str, Any]],
                   response: dict[str, Any], retention: timedelta | None = None) -> None:
        """Kept for `retention` (a tenant's own, from its policy), else the default."""
        now = datetime.now(UTC)
        kept = retention if retention is not None else self._retention
        async with database_errors("storing the response"), self._engine.begin() as conn:
            await conn.execute(stored_responses.insert().values(
                id=response["id"], tenant_id=tenant_id, created_at=now,
                expires_at=now + kept, context=context, response=response))

    async def get(self, tenant_id: str, response_id: str) -> StoredResponse | None:
        query = select(stored_responses.c.context, stored_responses.c.response).where(
            stored_responses.c.id == response_id,
            stored_responses.c.tenant_id == tenant_id,
            stored_responses.c.expires_at > datetime.now(UTC),
        )
        async with database_errors("reading the response"), self._engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return StoredResponse(response_id, row.context, row.response) if row else None

    async def delete(self, tenant_id: str, response_id: str) -> bool:
        query = delete(stored_responses).where(
            stored_responses.c.id == response_id,
            stored_responses.c.tenant_id == tenant_id,
            stored_responses.c.expires_at > datetime.now(UTC),
        )
        async with database_errors("deleting the response"), self._engine.begin() as conn:
            return (await conn.execute(query)).rowcount > 0

    async def purge_expired(self) -> int:
        query = delete(stored_responses).where(stored_responses.c.expires_at <= datetime.now(UTC))
        async with database_errors("purging expired responses"), self._engine.begin() as conn:
            return (await conn.execute(query)).rowcount
