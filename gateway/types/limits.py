"""Budgets and rate limits, compiled from the policy at load; budget/ enforces them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class BudgetState(StrEnum):
    """Where a tenant's spend stands against its budgets, as rules match on it
    (`when: {budget: [soft_limit]}`): past a cap's soft limit, or not."""

    OK = "ok"
    SOFT_LIMIT = "soft_limit"


def check_scope(scope: str) -> None:
    if scope != "tenant" and not (
        scope.startswith(("key:", "tag:")) and len(scope) > 4
    ):
        raise ValueError(f"scope must be 'tenant', 'key:<id>' or 'tag:<tag>', not {scope!r}")


def _check_optional(name: str, value: int | None, minimum: int) -> None:
    if value is not None and (isinstance(value, bool) or value < minimum):
        raise ValueError(f"{name} must be None (unlimited) or an int >= {minimum}, not {value}")


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Spend caps per UTC day and month; None is unlimited. 0 refuses everything."""

    daily_micro_usd: int | None = None
    monthly_micro_usd: int | None = None
    daily_tokens: int | None = None
    monthly_tokens: int | None = None
    soft_fraction: float = 0.8

    def __post_init__(self) -> None:
        _check_optional("daily_micro_usd", self.daily_micro_usd, 0)
        _check_optional("monthly_micro_usd", self.monthly_micro_usd, 0)
        _check_optional("daily_tokens", self.daily_tokens, 0)
        _check_optional("monthly_tokens", self.monthly_tokens, 0)
        if not 0.0 < self.soft_fraction <= 1.0:
            raise ValueError(f"soft_fraction must be in (0, 1], not {self.soft_fraction}")


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Requests and tokens per minute (token buckets) and requests in flight; None is
    unlimited. A limit of 0 is refused: it would be a disabled key, not a rate."""

    rpm: int | None = None
    tpm: int | None = None
    concurrent: int | None = None

    def __post_init__(self) -> None:
        _check_optional("rpm", self.rpm, 1)
        _check_optional("tpm", self.tpm, 1)
        _check_optional("concurrent", self.concurrent, 1)


@dataclass(frozen=True, slots=True)
class ScopeLimits:
    """The limits of one scope of a tenant: "tenant", "key:<key_id>" or "tag:<tag>"."""

    scope: str
    budget: BudgetLimits | None = None
    rate: RateLimits | None = None

    def __post_init__(self) -> None:
        check_scope(self.scope)

