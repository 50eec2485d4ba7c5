"""All SQL of backend_gpu_minutes: adding a flush's minutes to the stored ones, and reading a
range's utilisation per deployment."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.db.deployment_tables import backend_gpu_minutes
from gateway.db.dialect import dialect_insert


async def add_gpu_minutes(engine: AsyncEngine, rows: list[dict[str, Any]]) -> None:
    """Add each (backend, minute)'s samples to the stored ones, in one transaction."""
    async with engine.begin() as conn:
        insert = dialect_insert(conn, backend_gpu_minutes)
        c = backend_gpu_minutes.c
        await conn.execute(insert.on_conflict_do_update(
            index_elements=["backend", "minute"],
            set_={"util_sum": c.util_sum + insert.excluded.util_sum,
                  "samples": c.samples + insert.excluded.samples,
                  "memory_used_max": func.max(c.memory_used_max,
                                              insert.excluded.memory_used_max)
                  if conn.dialect.name == "sqlite" else func.greatest(
                      c.memory_used_max, insert.excluded.memory_used_max)},
        ), rows)


async def gpu_usage(conn: AsyncConnection, start: datetime,
                    end: datetime) -> dict[str, tuple[float | None, int | None]]:
    """Backend → (mean GPU utilisation 0..1, most memory used in any minute) over a range."""
    c = backend_gpu_minutes.c
    rows = await conn.execute(
        select(c.backend, cast(func.sum(c.util_sum), Float).label("util"),
               cast(func.sum(c.samples), BigInteger).label("n"),
               cast(func.max(c.memory_used_max), BigInteger).label("memory"))
        .where(c.minute >= start, c.minute < end).group_by(c.backend))
    return {r.backend: (r.util / r.n if r.n else None, int(r.memory) if r.memory else None)
            for r in rows}
