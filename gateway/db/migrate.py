"""Applies Alembic migrations (migrations/) to a database, from the CLI or the embedded mode.

Production databases are migrated only by `gateway migrate`; the gateway never alters a
Postgres schema on start-up. The embedded SQLite file is migrated by `gateway serve` itself,
so the one-command demo needs no extra step.
"""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine


def migrations_dir() -> Path:
    """migrations/ beside the package in a checkout, else in the working directory (the
    container image keeps it in /app); GATEWAY_MIGRATIONS_DIR overrides both."""
    override = os.environ.get("GATEWAY_MIGRATIONS_DIR")
    if override:
        return Path(override)
    beside = Path(__file__).resolve().parents[2] / "migrations"
    return beside if (beside / "env.py").exists() else Path.cwd() / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync: command.upgrade(alembic_config(sync), revision))


async def downgrade(engine: AsyncEngine, revision: str = "base") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(lambda sync: command.downgrade(alembic_config(sync), revision))


async def current_revision(engine: AsyncEngine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    async with engine.connect() as conn:
        return await conn.run_sync(
            lambda sync: MigrationContext.configure(sync).get_current_revision()
        )
