"""One way for CLI commands to reach the database: settings from the environment, the
embedded file migrated as `serve` does, the repositories, and the engine disposed after."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.budget.limits_repository import LimitsRepository
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.settings import Settings
from gateway.tenancy.repository import TenantRepository

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Database:
    tenants: TenantRepository
    limits: LimitsRepository
    settings: Settings
    engine: AsyncEngine


def run_with_database(work: Callable[[Database], Awaitable[T]]) -> T:
    async def main() -> T:
        settings = Settings()
        engine = create_engine(settings.database_url)
        try:
            if settings.is_embedded_db:
                await upgrade(engine)  # the embedded file migrates itself, as `serve` does
            pepper = (
                settings.key_pepper.get_secret_value().encode() if settings.key_pepper else None
            )
            db = Database(TenantRepository(engine, pepper), LimitsRepository(engine), settings,
                          engine)
            return await work(db)
        finally:
            await engine.dispose()

    return asyncio.run(main())
