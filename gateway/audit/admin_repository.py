"""All SQL of the admin chain (admin_audit and its head in audit_chains): appending an action
as the next row of the one "admin" chain, and when an action was last recorded."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.audit.admin_log import ADMIN_CHAIN, admin_row
from gateway.audit.records import GENESIS, Row, ts_datetime
from gateway.db.audit_tables import admin_audit, audit_chains

ATTEMPTS = 8  # racing writers: each retry starts from the head the winner left


class AdminLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def record(
        self, actor: str, action: str, target: str, details: dict[str, Any] | None = None
    ) -> Row:
        """Append one action to the admin chain; returns the row as stored."""
        for attempt in range(ATTEMPTS):
            try:
                async with self._engine.begin() as conn:
                    return await _append(conn, actor, action, target, details)
            except (IntegrityError, OperationalError):
                # Another writer took this seq (or SQLite's write lock): start again from
                # the head it left behind.
                if attempt == ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")


    async def last(self, action: str) -> datetime | None:
        """When `action` was last recorded (None: never)."""
        async with self._engine.connect() as conn:
            return await conn.scalar(  # type: ignore[no-any-return]
                select(func.max(admin_audit.c.ts)).where(admin_audit.c.action == action))


async def _append(
    conn: AsyncConnection, actor: str, action: str, target: str, details: dict[str, Any] | None
) -> Row:
    query = select(audit_chains.c.seq, audit_chains.c.row_hash).where(
        audit_chains.c.chain_id == ADMIN_CHAIN
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()  # racing appenders queue here instead of colliding
    head = (await conn.execute(query)).first()
    seq, prev = (head.seq, head.row_hash) if head else (0, GENESIS)
    row = admin_row(seq + 1, prev, time.time_ns() // 1000, actor, action, target, details)
    await conn.execute(admin_audit.insert().values(**{**row, "ts": ts_datetime(row["ts"])}))
    now = datetime.now(UTC)
    if head is None:  # the first action ever: a racing first writer makes this collide
        await conn.execute(audit_chains.insert().values(
            chain_id=ADMIN_CHAIN, seq=row["seq"], row_hash=row["row_hash"], updated_at=now))
    else:
        await conn.execute(
            update(audit_chains)
            .where(audit_chains.c.chain_id == ADMIN_CHAIN)
            .values(seq=row["seq"], row_hash=row["row_hash"], updated_at=now)
        )
    return row
