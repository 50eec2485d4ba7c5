"""How big a budget lease to ask for: enough typical requests to last `lease_s` at the rate
this replica has seen lately, never more than a small share of any limit (pure functions)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gateway.budget.limits import AdmitRequest

# Per-minute limits refill continuously: a lease may hold what refills in a few seconds.
RATE_SHARE = 0.1
# Slots come back as requests finish, but a lease keeps them until it ends.
CONCURRENT_SHARE = 0.25
_EWMA = 0.2  # weight of the newest request in the typical cost and tokens
_HEADROOM = 1.25  # a lease sized to the exact rate would run out just before its end


@dataclass(slots=True)
class Demand:
    """What one (tenant, scopes) key has asked for lately."""

    since: float  # start of the current counting window (monotonic s)
    count: int = 0
    rate_per_s: float = 0.0
    cost: float = 0.0  # typical worst-case cost of a request, micro-USD
    tokens: float = 0.0
    peak_in_flight: int = 1
    tight_until: float = 0.0  # a lease was refused: single requests until then

    def saw(self, request: AdmitRequest, now: float, window_s: float = 0.5) -> None:
        if self.count == 0 and self.cost == 0.0:
            self.cost, self.tokens = float(request.cost_micro_usd), float(request.tokens)
        else:
            self.cost += _EWMA * (request.cost_micro_usd - self.cost)
            self.tokens += _EWMA * (request.tokens - self.tokens)
        self.count += 1
        elapsed = now - self.since
        if elapsed >= window_s:
            self.rate_per_s = self.count / elapsed
            self.since, self.count = now, 0
            self.peak_in_flight = 1  # forget old peaks: slots held idle block other replicas
        elif self.count >= 16 and elapsed > 0:
            # A burst shows itself before the window ends: grow at once, shrink only at ends.
            self.rate_per_s = max(self.rate_per_s, self.count / elapsed)

    def in_flight(self, count: int) -> None:
        self.peak_in_flight = max(self.peak_in_flight, count)


@dataclass(frozen=True, slots=True)
class LeaseSize:
    requests: int
    slots: int
    cost_micro_usd: int
    tokens: int


def _cap(limit: int | None, share: float) -> float:
    return math.inf if limit is None else limit * share


def _whole(limit: int | None, share: float) -> float:
    """A share of a count limit, in whole units and at least one."""
    return math.inf if limit is None else max(1, math.floor(limit * share))


def _fit(cap: float, first: int, typical: float) -> float:
    """How many requests fit under `cap`: the current one plus typical ones."""
    if cap < first:
        return 1
    if typical <= 0:
        return math.inf
    return 1 + (cap - first) // typical


def size_lease(
    request: AdmitRequest,
    demand: Demand,
    now: float,
    lease_s: float,
    max_requests: int,
    share: float,
) -> LeaseSize:
    single = LeaseSize(1, 1, request.cost_micro_usd, request.tokens)
    if now < demand.tight_until:
        return single
    wanted = math.ceil(demand.rate_per_s * lease_s * _HEADROOM)
    count: float = max(1, min(wanted, max_requests))
    usd_cap = tokens_cap = slots_cap = math.inf
    for scope in request.scopes:
        if scope.budget is not None:
            b = scope.budget
            usd_cap = min(usd_cap, _cap(b.daily_micro_usd, share),
                          _cap(b.monthly_micro_usd, share))
            tokens_cap = min(tokens_cap, _cap(b.daily_tokens, share),
                             _cap(b.monthly_tokens, share))
        if scope.rate is not None:
            r = scope.rate
            count = min(count, _whole(r.rpm, RATE_SHARE))
            tokens_cap = min(tokens_cap, _cap(r.tpm, RATE_SHARE))
            slots_cap = min(slots_cap, _whole(r.concurrent, CONCURRENT_SHARE))
    typical_cost, typical_tokens = math.ceil(demand.cost), math.ceil(demand.tokens)
    count = min(count, _fit(usd_cap, request.cost_micro_usd, typical_cost),
                _fit(tokens_cap, request.tokens, typical_tokens))
    requests = int(count)
    if requests <= 1:
        return single
    extra = requests - 1
    slots = int(min(requests, slots_cap, math.ceil(demand.peak_in_flight * 1.5) + 1))
    return LeaseSize(
        requests,
        max(1, slots),
        request.cost_micro_usd + extra * typical_cost,
        request.tokens + extra * typical_tokens,
    )
