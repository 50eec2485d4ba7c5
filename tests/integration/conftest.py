"""Database fixtures: the same tests run on SQLite (embedded) and on real Postgres."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    else:
        url = request.getfixturevalue("postgres_url")
    eng = create_engine(url)
    if request.param == "postgres":
        async with eng.begin() as conn:  # a clean schema for every test
            await conn.execute(text("DROP SCHEMA public CASCADE"))
            await conn.execute(text("CREATE SCHEMA public"))
    await upgrade(eng)
    yield eng
    await eng.dispose()
