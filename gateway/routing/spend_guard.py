"""Spend is never forgotten across a Redis outage: the audit log is the source of truth.

While Redis is away a fail_open tenant is served unmetered, but each replica spends at most
`share` of what was left of the tenant's budget (read from the audit log when the outage
began); what it spent is owed and charged to Redis once Redis answers again. A Redis that
lost its data (restarted empty) has each tenant's day and month rebuilt from the audit log
before the tenant's next admission. Only the tenant scope is rebuilt (the audit log keeps
tenants' costs; key and tag scopes get the owed charges only).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from gateway.budget.limits import BudgetUnavailable
from gateway.budget.spend_ledger import SpendLedger
from gateway.errors import BudgetStoreUnavailable
from gateway.policy.tenants import TenantPolicy

log = logging.getLogger(__name__)
PROBE_INTERVAL_S = 1.0  # while Redis is away, how often a request checks it is back
AUDIT_READ_TIMEOUT_S = 2.0  # once per tenant and outage (or rebuild), not per request

# (tenant id, day, month) → (day, month) micro-USD the audit log knows of
AuditRead = Callable[[str, str, str], Awaitable[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Unmetered:
    """A request served while Redis was away: what it held of this replica's share."""

    tenant_id: str
    scopes: tuple[str, ...]
    day: str
    month: str
    held_micro_usd: int


@dataclass(slots=True)
class _Owed:
    tenant_id: str
    scopes: tuple[str, ...]
    day: str
    month: str
    micro_usd: int
    tokens: int
    at_unix_s: float


@dataclass(slots=True)
class _Allowance:
    left_micro_usd: int | None  # None: the tenant has no spend limit to protect
    used_micro_usd: int = 0


class SpendGuard:
    def __init__(self, ledger: SpendLedger, audit: AuditRead, share: float,
                 clock: Callable[[], float] = time.time) -> None:
        self._ledger = ledger
        self._audit = audit
        self._share = share
        self._clock = clock
        self._checked: set[tuple[str, str]] = set()  # (tenant, day) known rebuilt
        self._down = False
        self._next_probe_s = 0.0
        self._allowances: dict[str, _Allowance] = {}
        self._owed: list[_Owed] = []
        self.overspend_refusals = 0

    @property
    def owed_micro_usd(self) -> int:
        return sum(o.micro_usd for o in self._owed)

    async def before_admit(self, policy: TenantPolicy, tenant_id: str, day: str,
                           month: str) -> None:
        """Make sure Redis knows the tenant's spend (rebuilt if it lost it) and has been
        charged what was served without it. One Redis call per tenant and day, and at most
        one a second while Redis is away; never raises."""
        if (tenant_id, day) in self._checked and not self._down:
            return
        if self._down and time.monotonic() < self._next_probe_s:
            return
        try:
            await self._check(policy, tenant_id, day, month)
        except BudgetUnavailable:
            self.store_failed()
            return
        if self._down:
            self._down = False
            self._allowances.clear()
            log.warning("budget store answers again; charging %d micro-USD served unmetered",
                        self.owed_micro_usd)
        await self._charge_owed()

    async def _check(self, policy: TenantPolicy, tenant_id: str, day: str, month: str) -> None:
        rebuilt_at, now = await self._ledger.rebuilt_at(tenant_id, day)
        if rebuilt_at is None:
            spent_day, spent_month = await self._read_audit(tenant_id, day, month)
            if spent_day is not None and spent_month is not None:
                await self._ledger.raise_to(tenant_id, "tenant", day, month, spent_day,
                                            spent_month, now)
                rebuilt_at = now
                log.info("budget spend of tenant %s rebuilt from the audit log: %d micro-USD "
                         "today, %d this month", tenant_id, spent_day, spent_month)
        if rebuilt_at is not None:
            # Owed spend the audit log already held when the rebuild read it is in Redis now.
            self._owed = [o for o in self._owed
                          if o.tenant_id != tenant_id or o.at_unix_s >= rebuilt_at]
            self._checked.add((tenant_id, day))
        if len(self._checked) > 100_000:  # tenants and days come and go
            self._checked.clear()

    def store_failed(self) -> None:
        """Redis failed: it may come back empty, so every tenant is checked again after."""
        if not self._down:
            self._down = True
            self._checked.clear()
        self._next_probe_s = time.monotonic() + PROBE_INTERVAL_S

    def store_answered(self) -> None:
        """An admission reached Redis; owed spend goes with the next check."""
        if self._down:
            self._next_probe_s = 0.0

    async def admit_unmetered(self, policy: TenantPolicy, tenant_id: str,
                              scopes: tuple[str, ...], day: str, month: str,
                              cost_micro_usd: int) -> Unmetered:
        """Serve without Redis within this replica's share of what the tenant had left, or
        refuse with a 503 (the same answer a fail_closed tenant gets)."""
        self.store_failed()
        allowance = self._allowances.get(tenant_id)
        if allowance is None:
            allowance = await self._allowance(policy, tenant_id, day, month)
            allowance = self._allowances.setdefault(tenant_id, allowance)
        if allowance.left_micro_usd is not None:
            bound = int(self._share * max(0, allowance.left_micro_usd))
            if allowance.used_micro_usd + cost_micro_usd > bound:
                self.overspend_refusals += 1
                raise BudgetStoreUnavailable(
                    "The budget service is unavailable and this server's share of your "
                    "remaining budget is spent; the request was not served. Please try again "
                    "shortly.")
        allowance.used_micro_usd += cost_micro_usd
        return Unmetered(tenant_id, scopes, day, month, cost_micro_usd)

    def settled_unmetered(self, held: Unmetered, micro_usd: int, tokens: int) -> None:
        allowance = self._allowances.get(held.tenant_id)
        if allowance is not None:  # gone when Redis came back meanwhile
            allowance.used_micro_usd += max(0, micro_usd) - held.held_micro_usd
        if micro_usd > 0 or tokens > 0:
            self._owed.append(_Owed(held.tenant_id, held.scopes, held.day, held.month,
                                    max(0, micro_usd), max(0, tokens), self._clock()))

    async def _allowance(self, policy: TenantPolicy, tenant_id: str, day: str,
                         month: str) -> _Allowance:
        budget = policy.tenant_limits.budget
        limits = (None, None) if budget is None else (budget.daily_micro_usd,
                                                      budget.monthly_micro_usd)
        if limits == (None, None):
            return _Allowance(None)
        spent = await self._read_audit(tenant_id, day, month)
        lefts = [limit - (done or 0) for limit, done in zip(limits, spent, strict=True)
                 if limit is not None]
        return _Allowance(min(lefts))

    async def _read_audit(self, tenant_id: str, day: str,
                          month: str) -> tuple[int | None, int | None]:
        """The audited spend, or (None, None) when the database cannot say in time (the
        rebuild is then tried again at the tenant's next admission)."""
        try:
            async with asyncio.timeout(AUDIT_READ_TIMEOUT_S):
                return await self._audit(tenant_id, day, month)
        except (SQLAlchemyError, OSError, TimeoutError) as exc:
            log.warning("audit log unreadable, budget spend of %s not rebuilt: %r", tenant_id,
                        exc)
        return None, None

    async def _charge_owed(self) -> None:
        """Taken off the list before the await, so two requests never charge it twice; what
        Redis refuses goes back on it."""
        batch, self._owed = self._owed, []
        for n, owed in enumerate(batch):
            try:
                await self._ledger.charge(owed.tenant_id, owed.scopes, owed.day, owed.month,
                                          owed.micro_usd, owed.tokens)
            except BudgetUnavailable:
                self._owed[:0] = batch[n:]
                self.store_failed()
                return
