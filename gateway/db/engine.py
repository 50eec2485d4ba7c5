"""Async database engine construction (Postgres in production, SQLite embedded)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from gateway.errors import DatabaseUnavailable

CONNECT_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 10.0


def create_engine(url: str, *, command_timeout_s: float | None = None) -> AsyncEngine:
    """`command_timeout_s` bounds every statement on Postgres: the serving process sets it
    (a hung database must not hold requests); CLI reports and maintenance over months of
    rows do not."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url)

        @event.listens_for(engine.sync_engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:  # type: ignore[no-untyped-def]
            cursor = dbapi_conn.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    # Bounded waits: a database that accepts connections but never answers must not hold a
    # request (or the audit writer) for asyncpg's default minute.
    return create_async_engine(
        url, pool_size=10, max_overflow=10, pool_pre_ping=True, pool_timeout=5,
        connect_args={"timeout": CONNECT_TIMEOUT_S, "command_timeout": command_timeout_s},
    )


@asynccontextmanager
async def database_errors(what: str) -> AsyncIterator[None]:
    """Turn "the database is down or hung" into DatabaseUnavailable (503), within a bound."""
    try:
        async with asyncio.timeout(COMMAND_TIMEOUT_S):
            yield
    except (SQLAlchemyError, OSError, TimeoutError) as exc:
        raise DatabaseUnavailable(f"{what}: the database is unavailable") from exc
