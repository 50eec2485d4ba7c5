"""The BudgetStore seam: reserve the worst case before dispatch, settle to the actual after.

Two implementations keep one contract (tests/integration/test_budget_contract.py):
memory_store.MemoryBudgetStore (one process) and redis_store.RedisBudgetStore (shared by
every replica).
"""

from __future__ import annotations

from typing import Protocol

from gateway.budget.limits import Admission, AdmitRequest, Reservation, ScopeUsage


class BudgetStore(Protocol):
    async def admit(self, request: AdmitRequest) -> Admission:
        """Atomically over all scopes: admit and reserve everywhere, or change nothing."""
        ...

    async def settle(
        self,
        reservation: Reservation,
        actual_micro_usd: int,
        actual_tokens: int,
        requests_used: int | None = None,
    ) -> None:
        """Release the reservation and record the actual spend; once per request id.
        `requests_used` < reservation.requests gives a lease's unused rpm permits back."""
        ...

    async def usage(self, tenant_id: str, scope: str, day: str, month: str) -> ScopeUsage: ...

    async def close(self) -> None: ...
