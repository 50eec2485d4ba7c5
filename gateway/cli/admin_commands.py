"""`gateway migrate`, `gateway keys ...`, `gateway tenants ...`: direct database administration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import click

from gateway.cli.database import Database, print_table, run_with_database

if TYPE_CHECKING:  # the database layer loads when a command runs (cli/main.py)
    from gateway.settings import Settings
    from gateway.tenancy.repository import TenantRepository

T = TypeVar("T")


def _run(work: Callable[[TenantRepository, Settings], Awaitable[T]]) -> T:
    return run_with_database(lambda db: work(db.tenants, db.settings))


@click.command()
@click.option("--revision", default="head", show_default=True)
def migrate(revision: str) -> None:
    """Apply database migrations (GATEWAY_DATABASE_URL)."""
    from gateway.db.migrate import current_revision, upgrade

    async def work(db: Database) -> str | None:
        await upgrade(db.engine, revision)
        return await current_revision(db.engine)

    try:
        revision_now = run_with_database(work, migrate=False)
    except KeyboardInterrupt:
        # The whole upgrade is one transaction: cut off, it is rolled back, not half applied.
        raise click.ClickException("migration interrupted; nothing of it was applied (it runs"
                                   " in one transaction): run `gateway migrate` again") from None
    click.echo(f"database at revision {revision_now}")


@click.group()
def keys() -> None:
    """Create, list and revoke tenant API keys."""


@keys.command("create")
@click.option("--tenant", required=True, help="tenant name (created if it does not exist)")
@click.option("--name", default=None, help="a label for the key")
def keys_create(tenant: str, name: str | None) -> None:
    """Create a key. It is printed once, on the last line; only its hash is stored."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog
    from gateway.tenancy.names import tenant_name_problem

    problem = tenant_name_problem(tenant)
    if problem is not None:  # the admin API's rule: no tenant the API could not name
        raise click.BadParameter(f"{tenant!r}: {problem}", param_hint="--tenant")


    async def work(db: Database) -> tuple[str, str]:
        existed = await db.tenants.get_tenant(tenant)
        row = existed or await db.tenants.ensure_tenant(tenant)
        admin_log = AdminLog(db.engine)
        if existed is None:
            await admin_log.record(cli_actor(), "tenant.create", tenant, {"tenant_id": row.id})
        key, key_row = await db.tenants.create_key(row, name)
        # The key's id and display prefix only: the key itself is never recorded.
        await admin_log.record(cli_actor(), "key.create", tenant,
                               {"key_id": key_row.id, "prefix": key_row.prefix, "name": name})
        return key, key_row.id

    key, key_id = run_with_database(work)
    click.echo(f"created key {key_id} for tenant {tenant!r}; store it now, it is not shown again:",
               err=True)
    click.echo(key)


@keys.command("list")
@click.option("--tenant", default=None)
def keys_list(tenant: str | None) -> None:
    """List keys (prefixes only)."""

    async def work(repo: TenantRepository, _: Settings) -> None:
        rows = [(k.id, k.tenant_name, f"{k.prefix}…", k.name or "-",
                 f"revoked {k.revoked_at:%Y-%m-%d}" if k.revoked_at else "active")
                for k in await repo.list_keys(tenant)]
        print_table(("ID", "TENANT", "PREFIX", "NAME", "STATE"), rows)

    _run(work)


@keys.command("revoke")
@click.argument("key_id")
def keys_revoke(key_id: str) -> None:
    """Revoke a key by id (takes effect within the key cache TTL on running gateways)."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog


    async def work(db: Database) -> bool:
        revoked = await db.tenants.revoke_key(key_id)
        if revoked:
            await AdminLog(db.engine).record(cli_actor(), "key.revoke", key_id)
        return revoked

    if not run_with_database(work):
        raise click.ClickException(f"no active key with id {key_id}")
    click.echo(f"revoked {key_id}")


@click.group()
def tenants() -> None:
    """List, disable and enable tenants."""


@tenants.command("list")
def tenants_list() -> None:
    """List tenants."""
    async def work(repo: TenantRepository, _: Settings) -> None:
        rows = [(t.id, t.name, "enabled" if t.enabled else "disabled")
                for t in await repo.list_tenants()]
        print_table(("ID", "NAME", "STATE"), rows)

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
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog

    async def work(db: Database) -> bool:
        changed = await db.tenants.set_enabled(name, enabled)
        if changed:
            action = "tenant.enable" if enabled else "tenant.disable"
            await AdminLog(db.engine).record(cli_actor(), action, name)
        return changed

    if not run_with_database(work):
        raise click.ClickException(f"no tenant named {name}")
    click.echo(f"tenant {name} {'enabled' if enabled else 'disabled'}")
