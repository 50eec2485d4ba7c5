"""Admission against budgets and rate limits, settling afterwards, and telling the client:
OpenAI's x-ratelimit-* headers, 429s the official SDK understands, the cost of each request.

Redis trouble is the tenant's choice (policy `on_budget_store_error`): fail open serves the
request unmetered and counts it; fail closed refuses with 503. Never a crash, never a hang:
the store's calls have short timeouts.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field

from gateway.budget.limits import (
    Admission,
    AdmitRequest,
    BudgetUnavailable,
    DayPeriods,
    LimitReason,
    RateState,
    Reservation,
    ScopeLimits,
)
from gateway.budget.pricing import cost_micro_usd
from gateway.budget.store import BudgetStore
from gateway.errors import BudgetStoreUnavailable, QuotaExceeded, RateLimited
from gateway.policy.tenants import BudgetStoreFailure, TenantPolicy
from gateway.policy.token_counting import prompt_tokens_for
from gateway.routing.refusals import Candidate, WorstCase, budget_explanation, rate_explanation
from gateway.routing.spend_guard import SpendGuard, Unmetered
from gateway.telemetry.metrics import GatewayMetrics
from gateway.types import Profile, RouteDecision, TenantContext, Usage

# Worst case reserved when the client sets no max_tokens (settled to the actual afterwards).
DEFAULT_RESERVE_OUTPUT_TOKENS = 4096

log = logging.getLogger(__name__)
SOFT_LIMIT_HEADER = "x-gateway-budget-warning"
RATE_WORDS = {LimitReason.RPM: "requests per minute", LimitReason.TPM: "tokens per minute",
              LimitReason.CONCURRENT: "concurrent requests"}


@dataclass(frozen=True, slots=True)
class Admitted:
    """Step 3: what the budget store held back, and the rate-limit headers to send."""

    reservation: Reservation | None  # None: unmetered (the store was down, fail open)
    headers: dict[str, str] = field(default_factory=dict)
    unmetered: Unmetered | None = None  # what it holds of the replica's fail-open share


class BudgetGate:
    def __init__(self, store: BudgetStore, metrics: GatewayMetrics | None = None,
                 guard: SpendGuard | None = None) -> None:
        self._store = store
        self._metrics = metrics
        self._guard = guard  # None: budgets in memory, nothing to rebuild
        # tenant id → whether its last admission crossed a soft limit; rules read it through
        # decide(over_soft_limit=...) so a tenant is downgraded before the hard stop.
        self._soft: dict[str, bool] = {}
        self._periods = DayPeriods()

    def over_soft_limit(self, tenant_id: str) -> bool:
        return self._soft.get(tenant_id, False)

    async def admit(
        self,
        policy: TenantPolicy,
        tenant: TenantContext,
        request_id: str,
        scopes: tuple[ScopeLimits, ...],
        cost_micro_usd: int,
        tokens: int,
        worst: WorstCase | None = None,
    ) -> Admitted:
        day, month = self._periods(time.time())
        guard = self._guard
        if guard is not None:
            await guard.before_admit(policy, tenant.tenant_id, day, month)
        try:
            admission = await self._store.admit(AdmitRequest(
                request_id, tenant.tenant_id, scopes, cost_micro_usd, tokens, day, month
            ))
        except BudgetUnavailable as exc:
            if self._metrics is not None:
                self._metrics.budget_store_errors.labels(operation="admit").inc()
            if policy.on_budget_store_error is BudgetStoreFailure.FAIL_CLOSED:
                if guard is not None:
                    guard.store_failed()
                raise BudgetStoreUnavailable(
                    "The budget service is unavailable; the request was not served. "
                    "Please try again shortly."
                ) from exc
            held = None
            if guard is not None:
                held = await guard.admit_unmetered(
                    policy, tenant.tenant_id, tuple(s.scope for s in scopes), day, month,
                    cost_micro_usd)
            log.warning("budget store unavailable, serving %s unmetered: %s", request_id, exc)
            return Admitted(None, {"x-gateway-unmetered": "true"}, held)
        if guard is not None:
            guard.store_answered()
        if not admission.admitted:
            if self._metrics is not None:
                self._metrics.budget_rejections.labels(reason=admission.reason or "?").inc()
            raise refusal(admission, await self._explain(admission, tenant, scopes, worst,
                                                         day, month))
        if admission.soft_limit != self._soft.get(tenant.tenant_id, False):
            if len(self._soft) > 100_000:
                self._soft.clear()
            self._soft[tenant.tenant_id] = admission.soft_limit
        headers = rate_headers(admission.rate)
        if admission.soft_limit:
            headers[SOFT_LIMIT_HEADER] = "soft budget limit reached"
        return Admitted(admission.reservation, headers)

    def settle_unmetered(self, held: Unmetered, cost_micro_usd: int, tokens: int) -> None:
        """What an unmetered request cost: owed to Redis, charged once it answers."""
        if self._guard is not None:
            self._guard.settled_unmetered(held, cost_micro_usd, tokens)
    async def _explain(self, admission: Admission, tenant: TenantContext,
                       scopes: tuple[ScopeLimits, ...], worst: WorstCase | None, day: str,
                       month: str) -> str:
        """The refusal's reasons (a refused request may afford the store one more read)."""
        if worst is None:
            return ""
        limits = next((s for s in scopes if s.scope == admission.scope), None)
        if admission.reason is not None and admission.reason.rate:
            return rate_explanation(admission, limits, worst)
        try:
            usage = await self._store.usage(tenant.tenant_id, admission.scope or "tenant",
                                            day, month)
        except BudgetUnavailable as exc:
            log.warning("budget usage unreadable for a refusal's message: %s", exc)
            usage = None
        return budget_explanation(admission, limits, worst, usage)

    async def settle(self, reservation: Reservation, cost_micro_usd: int, tokens: int) -> bool:
        """False when the store could not be reached (the audit row still has the cost)."""
        try:
            await self._store.settle(reservation, cost_micro_usd, tokens)
        except BudgetUnavailable as exc:
            if self._metrics is not None:
                self._metrics.budget_store_errors.labels(operation="settle").inc()
            log.warning("budget settle of %s failed (its reservation will expire): %s",
                        reservation.request_id, exc)
            return False
        return True


# OpenAI sends x-ratelimit-* on every response and some clients pace themselves by them, so a
# tenant without a limit gets them too: this stand-in (2^31 - 1, documented in the README) as
# both limit and remaining, and a reset of "0s".
UNLIMITED = 2**31 - 1


def rate_headers(rate: RateState | None) -> dict[str, str]:
    """OpenAI's names; reset as a duration like "6m0s", "1s", "120ms"."""
    out: dict[str, str] = {}
    if rate is not None and rate.limit_requests is not None:
        out["x-ratelimit-limit-requests"] = str(rate.limit_requests)
        out["x-ratelimit-remaining-requests"] = str(max(0, rate.remaining_requests or 0))
        out["x-ratelimit-reset-requests"] = duration(rate.reset_requests_s or 0.0)
    else:
        out["x-ratelimit-limit-requests"] = out["x-ratelimit-remaining-requests"] = _UNLIMITED
        out["x-ratelimit-reset-requests"] = "0s"
    if rate is not None and rate.limit_tokens is not None:
        out["x-ratelimit-limit-tokens"] = str(rate.limit_tokens)
        out["x-ratelimit-remaining-tokens"] = str(max(0, rate.remaining_tokens or 0))
        out["x-ratelimit-reset-tokens"] = duration(rate.reset_tokens_s or 0.0)
    else:
        out["x-ratelimit-limit-tokens"] = out["x-ratelimit-remaining-tokens"] = _UNLIMITED
        out["x-ratelimit-reset-tokens"] = "0s"
    return out


_UNLIMITED = str(UNLIMITED)


def duration(seconds: float) -> str:
    if seconds < 1:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    whole = math.ceil(seconds)
    minutes, secs = divmod(whole, 60)
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def refusal(admission: Admission, why: str = "") -> QuotaExceeded | RateLimited:
    """The 429 for a refused admission: budgets are final for the period (the SDK must not
    retry: x-should-retry false), rate limits say when to come back (retry-after). `why`: the
    limit, spent, reserved and what would fit (refusals.py)."""
    why = f" {why}" if why else ""
    headers = rate_headers(admission.rate)
    where = _scope_words(admission.scope)
    # A refusal always names its limit; one without reads as a monthly token budget.
    reason = admission.reason or LimitReason.MONTHLY_TOKENS
    if reason.rate:
        wait = admission.retry_after_s or 1.0
        headers["retry-after"] = str(max(1, math.ceil(wait)))
        headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return RateLimited(
            f"Rate limit reached for {where}: {RATE_WORDS[reason]}.{why} Please try again in "
            f"{duration(wait)}.",
            headers=headers,
        )
    period = "daily" if reason.daily else "monthly"
    unit = "spend" if reason.money else "token"
    return QuotaExceeded(
        f"You exceeded the {period} {unit} budget of {where}.{why} It resets at the start of the "
        "next UTC " + ("day." if period == "daily" else "month."),
        headers=headers,
    )


def _scope_words(scope: str | None) -> str:
    if scope is None or scope == "tenant":
        return "your organization"
    kind, _, name = scope.partition(":")
    return f"this API key ({name})" if kind == "key" else f"tag '{name}'"


def worst_case(profile: Profile, decision: RouteDecision) -> tuple[int, int]:
    """(micro-USD, tokens) to reserve: the whole prompt and every output token allowed, at the
    dearest candidate's price (a fallback may serve it)."""
    worst = worst_case_of(profile, decision)
    return worst.cost_micro_usd, worst.tokens


def worst_case_of(profile: Profile, decision: RouteDecision) -> WorstCase:
    """`worst_case`, keeping how it was reached for a refusal's message."""
    output = profile.max_output_tokens or DEFAULT_RESERVE_OUTPUT_TOKENS
    # Each candidate's own count: an estimated tokenizer may see more tokens than o200k.
    usages = [Usage(prompt_tokens_for(b, profile), output) for b in decision.candidates]
    cost = max(cost_micro_usd(u, b.price) for u, b in zip(usages, decision.candidates, strict=True))
    return WorstCase(
        cost, max(u.total_tokens for u in usages), output, profile.max_output_tokens is None,
        tuple(Candidate(b.name, b.price, u.prompt_tokens)
              for u, b in zip(usages, decision.candidates, strict=True)))
