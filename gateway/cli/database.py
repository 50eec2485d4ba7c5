"""One way for CLI commands to reach the database: settings from the environment, the
embedded file migrated as `serve` does, the repositories, and the engine disposed after; and
one way to print what they list."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit, urlunsplit

import click

from gateway.errors import SetupError

if TYPE_CHECKING:  # loaded when a command runs, not when its arguments are parsed
    from sqlalchemy.ext.asyncio import AsyncEngine

    from gateway.budget.limits_repository import LimitsRepository
    from gateway.settings import Settings
    from gateway.tenancy.repository import TenantRepository

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Database:
    tenants: TenantRepository
    limits: LimitsRepository
    settings: Settings
    engine: AsyncEngine


def run_with_database(work: Callable[[Database], Awaitable[T]], *, migrate: bool = True,
                      database_url: str | None = None, settings: Settings | None = None,
                      read_only: bool = False) -> T:
    """Run `work` against GATEWAY_DATABASE_URL (or the URL given, or the settings a command
    has read already). The embedded SQLite file is migrated first unless `migrate` is False
    (the migrate command does its own). A `read_only` command never creates the embedded
    file: where there is none, it stops with one line naming where it looked."""

    from sqlalchemy.exc import DBAPIError

    from gateway.budget.limits_repository import LimitsRepository
    from gateway.db.engine import create_engine
    from gateway.db.migrate import upgrade
    from gateway.settings import Settings
    from gateway.tenancy.repository import TenantRepository

    if settings is None:
        settings = Settings(database_url=database_url) if database_url else Settings()
    chosen = settings
    if read_only:
        refuse_missing_database(chosen.database_url,
                                "--database-url" if database_url else None)

    async def main() -> T:
        engine = create_engine(chosen.database_url)
        try:
            if migrate and chosen.is_embedded_db:
                await upgrade(engine)  # the embedded file migrates itself, as `serve` does
            pepper = chosen.key_pepper.get_secret_value().encode() if chosen.key_pepper else None
            db = Database(TenantRepository(engine, pepper), LimitsRepository(engine), chosen,
                          engine)
            return await work(db)
        # Refused, unknown host, unopenable file, or the connection cut in the middle of the
        # work (asyncpg's "closed in the middle of operation" is an InterfaceError): one line.
        except (OSError, DBAPIError) as exc:
            raise SetupError(unreachable(chosen.database_url, exc)) from None
        finally:
            await engine.dispose()

    return asyncio.run(main())


def refuse_missing_database(url: str, given_by: str | None = None) -> None:
    """An embedded database that does not exist is the wrong place, not an empty log: say
    where we looked and how to point elsewhere, instead of creating an empty file."""
    from sqlalchemy.engine import make_url

    from gateway.state_home import resolve

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    path = Path(parsed.database)
    if path.is_file():
        return
    if given_by is not None:
        source = given_by
    elif "GATEWAY_DATABASE_URL" in os.environ:
        source = "GATEWAY_DATABASE_URL"
    else:
        home = resolve()
        source = f"the state home, from {home.source}"
    raise SetupError(f"no gateway database at {path.resolve()} ({source}); point at the one "
                     "`gateway serve` uses with --home DIR, GATEWAY_HOME or "
                     "GATEWAY_DATABASE_URL (`gateway status` in its shell shows them)")


def unreachable(url: str, exc: BaseException) -> str:
    """One line naming the database (never its password) and the setting to fix."""
    from sqlalchemy.engine import make_url

    safe = make_url(url).render_as_string(hide_password=True)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:200]
    return (f"database {safe} failed (GATEWAY_DATABASE_URL or --database-url): "
            f"{type(getattr(exc, 'orig', None) or exc).__name__}: {reason}")


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Aligned columns under a header row, as every list command prints them."""
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        click.echo("  ".join(str(cell).ljust(width)
                             for cell, width in zip(row, widths, strict=True)).rstrip())


# URLs taken apart by hand: SQLAlchemy's import would cost `gateway status` a quarter of a
# second.
def without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def embedded_file(url: str) -> Path | None:
    """The SQLite file a database URL names, or None (another database, or in memory)."""
    scheme, _, rest = url.partition("://")
    if not scheme.startswith("sqlite") or not rest.startswith("/"):
        return None
    path = rest[1:].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None
