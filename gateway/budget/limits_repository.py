"""All SQL about budgets and limits set through the admin API (one row per tenant scope)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import database_errors
from gateway.db.tables import budget_limits

# scope → (budget JSON or None, limits JSON or None)
ScopeOverrides = dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]]


class LimitsRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def overrides(self, tenant_id: str) -> ScopeOverrides:
        query = select(budget_limits.c.scope, budget_limits.c.budget, budget_limits.c.limits)
        async with database_errors("reading budget limits"), self._engine.connect() as conn:
            rows = await conn.execute(query.where(budget_limits.c.tenant_id == tenant_id))
            return {row.scope: (row.budget, row.limits) for row in rows}

    async def put(
        self,
        tenant_id: str,
        scope: str,
        budget: dict[str, Any] | None,
        limits: dict[str, Any] | None,
    ) -> None:
        """Replace the scope's row (delete + insert in one transaction: portable upsert)."""
        async with self._engine.begin() as conn:
            await conn.execute(delete(budget_limits).where(
                budget_limits.c.tenant_id == tenant_id, budget_limits.c.scope == scope
            ))
            await conn.execute(budget_limits.insert().values(
                tenant_id=tenant_id, scope=scope, budget=budget, limits=limits
            ))

    async def remove(self, tenant_id: str, scope: str) -> bool:
        async with self._engine.begin() as conn:
            result = await conn.execute(delete(budget_limits).where(
                budget_limits.c.tenant_id == tenant_id, budget_limits.c.scope == scope
            ))
            return bool(result.rowcount)
