"""`gateway budgets show|set|clear` (a tenant's budgets and rate limits: the policy file's and
the database overrides every replica applies) and `gateway usage` (spend, reservations and
what is left, read straight from the shared budget store)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

from gateway.cli.database import Database, run_with_database

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from pydantic import BaseModel

    from gateway.budget.limits import ScopeLimits
    from gateway.policy.loader import PolicySet
    from gateway.tenancy.repository import TenantRow

T = TypeVar("T")
# Admin tools wait longer for Redis than a request does: nobody is queueing behind them.
CLI_REDIS_TIMEOUT_S = 2.0
UNSET = "none"  # `--daily-usd none`: drop that field from the scope's override
BUDGET_FIELDS = ("daily_usd", "monthly_usd", "daily_tokens", "monthly_tokens", "soft_limit")
LIMIT_FIELDS = ("rpm", "tpm", "concurrent")


_run = run_with_database


def _policy(path: Path | None) -> PolicySet:
    from gateway.policy.loader import PolicyError, load_policy
    from gateway.settings import Settings

    path = path or Settings().policy_path
    try:
        return load_policy(path)
    except PolicyError as exc:
        problems = "\n".join(str(p) for p in exc.problems)
        raise click.ClickException(f"the policy {path} does not validate:\n{problems}") from None
    except OSError as exc:
        raise click.ClickException(f"cannot read the policy {path}: {exc}") from None


async def _tenant(db: Database, name: str) -> TenantRow:
    row = await db.tenants.get_tenant(name)
    if row is None:
        raise click.ClickException(f"no tenant named {name!r}")
    return row


async def _effective(
    db: Database, policy: PolicySet, row: TenantRow, key_id: str | None
) -> tuple[ScopeLimits, ...]:
    """The scopes a request of this tenant (with this key, and every tag anyone limited)
    would be admitted against: the gateway's own resolution, without its cache."""
    from gateway.policy.schema import TenantSpec
    from gateway.routing.limits import LimitsResolver
    from gateway.types import TenantContext

    spec = policy.tenant_specs.get(row.name, TenantSpec())
    overrides = await db.limits.overrides(row.id)
    tags = dict.fromkeys([*spec.tags, *(s[4:] for s in sorted(overrides) if s.startswith("tag:"))])
    resolver = LimitsResolver(db.limits.overrides, ttl_s=0)
    tenant = TenantContext(row.id, row.name, key_id or "-", row.enabled)
    scopes = await resolver.scopes(policy, tenant, tuple(tags))
    # Without --key-id the key scope would be the placeholder key "-": leave it out.
    return tuple(s for s in scopes if key_id is not None or not s.scope.startswith("key:"))


def _usd(micro: int | None) -> str | None:
    from gateway.budget.pricing import format_usd

    return None if micro is None else format_usd(micro)


def _limits_json(limits: ScopeLimits, overridden: bool) -> dict[str, Any]:
    budget, rate = limits.budget, limits.rate
    return {
        "scope": limits.scope,
        "source": "override" if overridden else "policy",
        "budget": None if budget is None else {
            "daily_usd": _usd(budget.daily_micro_usd),
            "monthly_usd": _usd(budget.monthly_micro_usd),
            "daily_tokens": budget.daily_tokens,
            "monthly_tokens": budget.monthly_tokens,
            "soft_limit": budget.soft_fraction,
        },
        "limits": None if rate is None else {
            "rpm": rate.rpm, "tpm": rate.tpm, "concurrent": rate.concurrent,
        },
    }


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


@click.group()
def budgets() -> None:
    """Show and change tenants' budgets and rate limits (database overrides of the policy)."""


@budgets.command("show")
@click.argument("tenant")
@click.option("--key-id", default=None, help="also show the scope of this API key")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="policy YAML (default: GATEWAY_POLICY_PATH or policies/default.yaml)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def show(tenant: str, key_id: str | None, policy_path: Path | None, as_json: bool) -> None:
    """The limits in force for TENANT: each scope's effective budget and rate limits, and
    whether they come from the policy file or a database override."""
    policy = _policy(policy_path)

    async def work(db: Database) -> dict[str, Any]:
        row = await _tenant(db, tenant)
        overrides = await db.limits.overrides(row.id)
        scopes = await _effective(db, policy, row, key_id)
        spec = policy.tenant_specs.get(tenant)
        return {
            "tenant": tenant,
            "tenant_id": row.id,
            "policy": spec.model_dump(exclude={"models"}, exclude_none=True) if spec else {},
            "overrides": {
                scope: {"budget": budget, "limits": limits}
                for scope, (budget, limits) in sorted(overrides.items())
            },
            "effective": [_limits_json(s, s.scope in overrides) for s in scopes],
        }

    report = _run(work)
    if as_json:
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(f"{tenant} (tenant id {report['tenant_id']})")
    header = ("scope", "source", "daily_usd", "monthly_usd", "daily_tok", "monthly_tok",
              "soft", "rpm", "tpm", "concurrent")
    rows = [header]
    for entry in report["effective"]:
        budget = entry["budget"] or {}
        limits = entry["limits"] or {}
        rows.append((entry["scope"], entry["source"],
                     *(_cell(budget.get(f)) for f in BUDGET_FIELDS),
                     *(_cell(limits.get(f)) for f in LIMIT_FIELDS)))
    _table(rows)


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


class _Optional(click.ParamType):
    """A number, or `none` to drop the field from the override (unlimited, or the default)."""

    def __init__(self, kind: type[int] | type[float]) -> None:
        self.kind = kind
        self.noun = "an integer" if kind is int else "a number"
        self.name = f"{kind.__name__}|{UNSET}"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | float | str:
        if isinstance(value, str) and value.lower() == UNSET:
            return UNSET
        try:
            return self.kind(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not {self.noun} (or '{UNSET}')", param, ctx)


USD, COUNT, SHARE = _Optional(float), _Optional(int), _Optional(float)


def _merge(current: dict[str, Any] | None, given: dict[str, Any]) -> dict[str, Any] | None:
    merged = dict(current or {})
    for name, value in given.items():
        if value is None:
            continue  # not on the command line: keep what the override had
        if value == UNSET:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged or None


def _validated(model: type[BaseModel], fields: dict[str, Any] | None) -> dict[str, Any] | None:
    """The override as the admin API stores it, after the policy schema's own checks."""
    from pydantic import ValidationError

    if fields is None:
        return None
    try:
        spec = model.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"--{'.'.join(str(p) for p in e['loc']).replace('_', '-')}: {e['msg']}"
            for e in exc.errors()
        )
        raise click.ClickException(f"invalid {model.__name__}: {problems}") from None
    dumped: dict[str, Any] = spec.model_dump(exclude_none=True)
    return dumped


@budgets.command("set")
@click.argument("tenant")
@click.option("--scope", default="tenant", show_default=True,
              help="tenant, key:<key id> or tag:<tag>")
@click.option("--daily-usd", type=USD, default=None)
@click.option("--monthly-usd", type=USD, default=None)
@click.option("--daily-tokens", type=COUNT, default=None)
@click.option("--monthly-tokens", type=COUNT, default=None)
@click.option("--soft-limit", type=SHARE, default=None,
              help="share of a cap (0-1] that marks requests over budget for rules")
@click.option("--rpm", type=COUNT, default=None, help="requests per minute")
@click.option("--tpm", type=COUNT, default=None, help="tokens per minute")
@click.option("--concurrent", type=COUNT, default=None, help="requests in flight")
def set_limits(tenant: str, scope: str, **values: Any) -> None:
    """Override one scope's budget and rate limits for TENANT. Options not given keep the
    override's current value; `none` drops one (unlimited, or the policy's default). Running
    gateways apply it within GATEWAY_LIMITS_CACHE_TTL_S."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog
    from gateway.budget.limits import check_scope
    from gateway.policy.schema import BudgetSpec, LimitsSpec

    try:
        check_scope(scope)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scope") from None
    if all(v is None for v in values.values()):
        raise click.UsageError("give at least one of the limit options (see --help)")

    async def work(db: Database) -> tuple[dict[str, Any] | None, dict[str, Any] | None, float]:
        row = await _tenant(db, tenant)
        if scope.startswith("key:"):
            # A typo in a key id would limit nobody: refuse keys of other tenants too.
            known = {k.id for k in await db.tenants.list_keys(tenant)}
            if scope[4:] not in known:
                raise click.ClickException(f"tenant {tenant!r} has no key with id {scope[4:]}")
        budget, limits = (await db.limits.overrides(row.id)).get(scope, (None, None))
        budget = _validated(BudgetSpec, _merge(budget, {f: values[f] for f in BUDGET_FIELDS}))
        limits = _validated(LimitsSpec, _merge(limits, {f: values[f] for f in LIMIT_FIELDS}))
        await db.limits.put(row.id, scope, budget, limits)
        await AdminLog(db.engine).record(cli_actor(), "limits.set", f"{tenant}/{scope}",
                                         {"budget": budget, "limits": limits})
        return budget, limits, db.settings.limits_cache_ttl_s

    budget, limits, ttl_s = _run(work)
    click.echo(f"{tenant} {scope}: budget {_compact(budget)}, limits {_compact(limits)}")
    click.echo(f"running gateways apply it within {ttl_s:g} s", err=True)


def _compact(fields: dict[str, Any] | None) -> str:
    if not fields:
        return "(none)"
    return ", ".join(f"{k}={v}" for k, v in fields.items())


@budgets.command("clear")
@click.argument("tenant")
@click.option("--scope", required=True, help="tenant, key:<key id> or tag:<tag>")
def clear(tenant: str, scope: str) -> None:
    """Drop a scope's override: the policy file's setting applies again."""
    from gateway.audit.admin_log import cli_actor
    from gateway.audit.admin_repository import AdminLog
    from gateway.budget.limits import check_scope

    try:
        check_scope(scope)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--scope") from None

    async def work(db: Database) -> bool:
        row = await _tenant(db, tenant)
        removed = await db.limits.remove(row.id, scope)
        if removed:
            await AdminLog(db.engine).record(cli_actor(), "limits.clear", f"{tenant}/{scope}")
        return removed

    if not _run(work):
        raise click.ClickException(f"tenant {tenant!r} has no override for scope {scope}")
    click.echo(f"cleared {tenant} {scope}; the policy's limits apply again")


@click.command("usage")
@click.argument("tenant")
@click.option("--key-id", default=None, help="also show the scope of this API key")
@click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
              help="policy YAML (default: GATEWAY_POLICY_PATH or policies/default.yaml)")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def usage(tenant: str, key_id: str | None, policy_path: Path | None, as_json: bool) -> None:
    """Spend today and this month, reservations in flight and what is left, per scope of
    TENANT, read from the shared budget store (GATEWAY_REDIS_URL)."""
    from gateway.budget.limits import BudgetUnavailable
    from gateway.budget.redis_store import RedisBudgetStore
    from gateway.routing.usage import usage_report
    from gateway.settings import Settings

    settings = Settings()
    if not settings.redis_url:
        # The embedded store is a dict inside the serving process: nothing to read from here.
        raise click.ClickException(
            "GATEWAY_REDIS_URL is not set: without Redis the budget store lives inside the "
            "running gateway process. Ask it instead: GET /admin/tenants/"
            f"{tenant}/usage with the admin key (or GET /v1/usage with the tenant's key)."
        )
    redis_url = settings.redis_url
    policy = _policy(policy_path)

    async def work(db: Database) -> dict[str, Any]:
        row = await _tenant(db, tenant)
        scopes = await _effective(db, policy, row, key_id)
        store = RedisBudgetStore.from_url(
            redis_url, timeout_s=max(settings.redis_timeout_s, CLI_REDIS_TIMEOUT_S)
        )
        try:
            report = await usage_report(store, row.id, scopes)
        except BudgetUnavailable as exc:
            raise click.ClickException(f"the budget store (Redis) did not answer: {exc}") \
                from None
        finally:
            await store.close()
        return {"tenant": tenant, **report}

    report = _run(work)
    if as_json:
        click.echo(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
        return
    click.echo(f"{tenant}: UTC day {report['day']}, month {report['month']}")
    rows = [("scope", "spent_today", "spent_month", "reserved", "in_flight",
             "left_today", "left_month", "tokens_today", "left_tok_today")]
    for s in report["scopes"]:
        left = s["remaining"]
        rows.append((s["scope"], s["spent_today_usd"], s["spent_month_usd"], s["reserved_usd"],
                     str(s["in_flight"]), _cell(left["daily_usd"]), _cell(left["monthly_usd"]),
                     str(s["tokens_today"]), _cell(left["daily_tokens"])))
    _table(rows)
