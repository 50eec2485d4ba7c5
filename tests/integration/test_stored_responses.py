"""Stored Responses API responses on a real database: per tenant, expiring, purged."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.conversations.repository import ResponseRepository
from gateway.db.tables import stored_responses
from gateway.tenancy.repository import TenantRepository

CONTEXT = [{"type": "message", "role": "user", "content": "Hi"}]
OUTPUT = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}]


async def _tenants(engine: AsyncEngine) -> tuple[str, str]:
    repo = TenantRepository(engine)
    return (await repo.ensure_tenant("a")).id, (await repo.ensure_tenant("b")).id


async def test_a_response_belongs_to_its_tenant(engine: AsyncEngine) -> None:
    a, b = await _tenants(engine)
    repo = ResponseRepository(engine, timedelta(days=30))
    await repo.save(a, CONTEXT, {"id": "resp_1", "output": OUTPUT})
    stored = await repo.get(a, "resp_1")
    assert stored is not None
    assert stored.conversation() == [*CONTEXT, *OUTPUT]
    assert await repo.get(b, "resp_1") is None
    assert not await repo.delete(b, "resp_1")
    assert await repo.delete(a, "resp_1")
    assert await repo.get(a, "resp_1") is None
    assert not await repo.delete(a, "resp_1")


async def test_expired_responses_are_unreadable_then_purged(engine: AsyncEngine) -> None:
    a, _ = await _tenants(engine)
    expired = ResponseRepository(engine, timedelta(seconds=-1))
    kept = ResponseRepository(engine, timedelta(days=1))
    await expired.save(a, CONTEXT, {"id": "resp_old", "output": []})
    await kept.save(a, CONTEXT, {"id": "resp_new", "output": []})
    assert await kept.get(a, "resp_old") is None
    assert not await kept.delete(a, "resp_old")
    assert await kept.purge_expired() == 1
    async with engine.connect() as conn:
        left = (await conn.execute(select(stored_responses.c.id))).scalars().all()
        count = (await conn.execute(select(func.count()).select_from(stored_responses))).scalar()
    assert left == ["resp_new"] and count == 1
