"""Database fixtures: the same tests run on SQLite (embedded) and on real Postgres."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from tests.support.databases import clear_schema


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    else:
        url = request.getfixturevalue("postgres_url")
    eng = create_engine(url)
    if request.param == "postgres":
        await clear_schema(eng)  # a clean schema for every test
    await upgrade(eng)
    yield eng
    await eng.dispose()
