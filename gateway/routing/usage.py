"""Spend, reservations and what is left, per budget scope: for `GET /v1/usage` (a tenant's
own key), the admin API and the CLI."""

from __future__ import annotations

import time
from typing import Any

from gateway.budget.limits import BudgetLimits, ScopeLimits, ScopeUsage, periods
from gateway.budget.pricing import format_usd
from gateway.budget.store import BudgetStore


async def usage_report(
    store: BudgetStore, tenant_id: str, scopes: tuple[ScopeLimits, ...]
) -> dict[str, Any]:
    day, month = periods(time.time())
    out: dict[str, Any] = {"day": day, "month": month, "scopes": []}
    for limits in scopes:
        used = await store.usage(tenant_id, limits.scope, day, month)
        out["scopes"].append(scope_report(limits, used))
    return out


def scope_report(limits: ScopeLimits, used: ScopeUsage) -> dict[str, Any]:
    budget = limits.budget or BudgetLimits()
    rate = limits.rate
    return {
        "scope": limits.scope,
        "spent_today_usd": format_usd(used.spent_day_micro_usd),
        "spent_month_usd": format_usd(used.spent_month_micro_usd),
        "tokens_today": used.tokens_day,
        "tokens_month": used.tokens_month,
        "reserved_usd": format_usd(used.reserved_micro_usd),
        "reserved_tokens": used.reserved_tokens,
        "in_flight": used.in_flight,
        "budget": {
            "daily_usd": _usd(budget.daily_micro_usd),
            "monthly_usd": _usd(budget.monthly_micro_usd),
            "daily_tokens": budget.daily_tokens,
            "monthly_tokens": budget.monthly_tokens,
            "soft_limit": budget.soft_fraction,
        },
        "remaining": {
            "daily_usd": _left(budget.daily_micro_usd, used.spent_day_micro_usd,
                               used.reserved_micro_usd, money=True),
            "monthly_usd": _left(budget.monthly_micro_usd, used.spent_month_micro_usd,
                                 used.reserved_micro_usd, money=True),
            "daily_tokens": _left(budget.daily_tokens, used.tokens_day, used.reserved_tokens),
            "monthly_tokens": _left(budget.monthly_tokens, used.tokens_month,
                                    used.reserved_tokens),
        },
        "limits": {
            "rpm": rate.rpm if rate else None,
            "tpm": rate.tpm if rate else None,
            "concurrent": rate.concurrent if rate else None,
        },
    }


def _usd(micro: int | None) -> str | None:
    return None if micro is None else format_usd(micro)


def _left(limit: int | None, spent: int, reserved: int, *, money: bool = False) -> Any:
    if limit is None:
        return None
    left = max(0, limit - spent - reserved)
    return format_usd(left) if money else left
