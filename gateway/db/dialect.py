"""INSERT … ON CONFLICT for whichever database an engine speaks: the one dialect switch the
repositories share."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def dialect_insert(conn: AsyncConnection, table: Any) -> Any:
    """INSERT with ON CONFLICT support for whichever database this is."""
    return insert_for(conn.dialect.name, table)


def insert_for(dialect: str, table: Any) -> Any:
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
