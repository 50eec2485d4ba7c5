"""A clean Postgres test database: tests share one database per run, so each starts from an
empty schema (SQLite files are fresh per test anyway)."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import create_engine


async def clear_schema(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(text("DROP SCHEMA public CASCADE"))
        await conn.execute(text("CREATE SCHEMA public"))


def empty_postgres(url: str) -> str:
    """The database at `url` with an empty schema, for a gateway process to migrate; `url`."""
    async def main() -> None:
        engine = create_engine(url)
        try:
            await clear_schema(engine)
        finally:
            await engine.dispose()

    asyncio.run(main())
    return url
