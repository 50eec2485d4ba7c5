"""Applies the Alembic migrations shipped in the package to a database, from the CLI or the
embedded mode.

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

from gateway.errors import SetupError
from gateway.package_data import migrations_path


class MigrationsMissing(SetupError):
    """The migrations folder is not where GATEWAY_MIGRATIONS_DIR (or the package) says."""


def migrations_dir() -> Path:
    """The migrations shipped inside the package; GATEWAY_MIGRATIONS_DIR overrides them (a
    deployment that carries its own)."""
    override = os.environ.get("GATEWAY_MIGRATIONS_DIR")
    where = Path(override) if override else migrations_path()
    if not (where / "env.py").is_file():
        source = "GATEWAY_MIGRATIONS_DIR" if override else "the installed package"
        raise MigrationsMissing(
            f"no Alembic migrations at {where} (from {source}); unset GATEWAY_MIGRATIONS_DIR "
            "to use the ones shipped with the package, or reinstall it")
    return where


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
