"""Whether the database answers, for readiness: one `SELECT 1` on the serving engine."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


class DatabaseProbe:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def ping(self) -> None:
        """Returns when the database answered; raises whatever the driver raised when not."""
        async with self._engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
