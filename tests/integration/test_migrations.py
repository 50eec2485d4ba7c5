"""Migrations up and down: head → base → head leaves the same schema, on SQLite and Postgres
(where the audit log's monthly partitions go with it and come back)."""

from __future__ import annotations

from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.db.migrate import alembic_config, current_revision, downgrade, upgrade


def _schema(sync: Connection) -> dict[str, tuple[list[str], list[str]]]:
    found = inspect(sync)
    return {
        table: (sorted(c["name"] for c in found.get_columns(table)),
                sorted(i["name"] or "" for i in found.get_indexes(table)))
        for table in found.get_table_names()
        if table != "alembic_version" and not table.startswith("audit_log_")
    }


async def _partitions(engine: AsyncEngine) -> list[str]:
    if engine.dialect.name != "postgresql":
        return []
    async with engine.connect() as conn:
        return sorted(await conn.scalars(text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'audit_log'::regclass")))


async def test_migrations_go_down_to_base_and_up_again(engine: AsyncEngine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert await current_revision(engine) == head
    async with engine.connect() as conn:
        at_head = await conn.run_sync(_schema)
    partitions = await _partitions(engine)
    assert "audit_log" in at_head and "admin_audit" in at_head
    assert ("audit_log_default" in partitions) == (engine.dialect.name == "postgresql")

    await downgrade(engine, "base")
    assert await current_revision(engine) is None
    async with engine.connect() as conn:
        assert await conn.run_sync(_schema) == {}
        if engine.dialect.name == "postgresql":  # no partition left behind
            assert not await conn.scalar(text(
                "SELECT count(*) FROM pg_class WHERE relname LIKE 'audit_log%'"))

    await upgrade(engine)
    assert await current_revision(engine) == head
    async with engine.connect() as conn:
        assert await conn.run_sync(_schema) == at_head
    assert await _partitions(engine) == partitions
