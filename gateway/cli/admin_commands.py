"""`gateway migrate`, `gateway keys ...`, `gateway tenants ...`: direct database administration."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import click

from gateway.cli.database import run_with_database
from gateway.db.engine import create_engine
from gateway.db.migrate import current_revision, upgrade
from gateway.settings import Settings
from gateway.tenancy.repository import TenantRepository

T = TypeVar("T")


def _run(work: Callable[[TenantRepository, Settings], Awaitable[T]]) -> T:
    return run_with_database(lambda db: work(db.tenants, db.settings))


@click.command()
@click.option("--revision", default="head", show_default=True)
def migrate(revision: str) -> None:
    """Apply database migrations (GATEWAY_DATABASE_URL)."""

    async def main() -> str | None:
        engine = create_engine(Settings().database_url)
        try:
            await upgrade(engine, revision)
            return await current_revision(engine)
        finally:
            await engine.dispose()

    click.echo(f"database at revision {asyncio.run(main())}")


@click.group()
def keys() -> None:
    """Create, list and revoke tenant API keys."""


@keys.command("create")
@click.option("--tenant", required=True, help="tenant name (created if it does not exist)")
@click.option("--name", default=None, help="a label for the key")
def keys_create(tenant: str, name: str | None) -> None:
    """Create a key. It is printed once, on the last line; only its hash is stored."""

    async def work(repo: TenantRepository, _: Settings) -> tuple[str, str]:
        row = await repo.ensure_tenant(tenant)
        key, key_row = await repo.create_key(row, name)
        return key, key_row.id

    key, key_id = _run(work)
    click.echo(f"created key {key_id} for tenant {tenant!r}; store it now, it is not shown again:",
               err=True)
    click.echo(key)


@keys.command("list")
@click.option("--tenant", default=None)
def keys_list(tenant: str | None) -> None:
    """List keys (prefixes only)."""

    async def work(repo: TenantRepository, _: Settings) -> None:
        for k in await repo.list_keys(tenant):
            state = f"revoked {k.revoked_at:%Y-%m-%d}" if k.revoked_at else "active"
            click.echo(f"{k.id}  {k.tenant_name:<20} {k.prefix}…  {k.name or '-':<16} {state}")

    _run(work)


@keys.command("revoke")
@click.argument("key_id")
def keys_revoke(key_id: str) -> None:
    """Revoke a key by id (takes effect within the key cache TTL on running gateways)."""

    async def work(repo: TenantRepository, _: Settings) -> bool:
        return await repo.revoke_key(key_id)

    if not _run(work):
        raise click.ClickException(f"no active key with id {key_id}")
    click.echo(f"revoked {key_id}")


@click.group()
def tenants() -> None:
    """List, disable and enable tenants."""


@tenants.command("list")
def tenants_list() -> None:
    async def work(repo: TenantRepository, _: Settings) -> None:
        for t in await repo.list_tenants():
            click.echo(f"{t.id}  {t.name:<20} {'enabled' if t.enabled else 'disabled'}")

    _run(work)


@tenants.command("disable")
@click.argument("name")
def tenants_disable(name: str) -> None:
    _set_enabled(name, False)


@tenants.command("enable")
@click.argument("name")
def tenants_enable(name: str) -> None:
    _set_enabled(name, True)


def _set_enabled(name: str, enabled: bool) -> None:
    async def work(repo: TenantRepository, _: Settings) -> bool:
        return await repo.set_enabled(name, enabled)

    if not _run(work):
        raise click.ClickException(f"no tenant named {name}")
    click.echo(f"tenant {name} {'enabled' if enabled else 'disabled'}")
