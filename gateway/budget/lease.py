"""One budget lease as the replica holding it sees it: what it still has room for, what its
requests actually spent, and the rate-limit headers it implies (leasing.py takes and settles
leases; this is the local bookkeeping in between)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from gateway.budget.limits import AdmitRequest, RateState, Reservation, ScopeLimits

LeaseKey = tuple[str, tuple[ScopeLimits, ...], str, str]  # tenant, scopes, day, month


@dataclass(slots=True)
class Lease:
    key: LeaseKey
    reservation: Reservation
    rate: RateState | None
    soft: bool
    deadline: float  # monotonic; no admission after it
    usd_left: int
    tokens_left: int
    requests_left: int
    slots_free: int
    in_flight: int = 0
    used: int = 0
    spent_usd: int = 0
    spent_tokens: int = 0
    closed: bool = False
    settling: bool = False

    def fits(self, request: AdmitRequest, now: float) -> bool:
        return (not self.closed and now < self.deadline and self.requests_left > 0
                and self.slots_free > 0 and self.usd_left >= request.cost_micro_usd
                and self.tokens_left >= request.tokens)

    def take(self, request: AdmitRequest) -> None:
        self.usd_left -= request.cost_micro_usd
        self.tokens_left -= request.tokens
        self.requests_left -= 1
        self.slots_free -= 1
        self.in_flight += 1
        self.used += 1

    def give_back(self, held: Reservation, usd: int, tokens: int) -> None:
        # The worst case held for the request becomes its actual; the rest is free again.
        self.usd_left += held.cost_micro_usd - usd
        self.tokens_left += held.tokens - tokens
        self.spent_usd += usd
        self.spent_tokens += tokens
        self.slots_free += 1
        self.in_flight -= 1


@dataclass(slots=True)
class LeaseStats:
    """Calls that reached the shared store, against requests admitted locally."""

    admitted: int = 0
    leases: int = 0
    settles: int = 0
    settle_failures: int = 0  # retried until the store answers (or the lease expires there)

    def numbers(self) -> dict[str, int]:
        return asdict(self)



def local_rate(lease: Lease) -> RateState | None:
    """The shared buckets as the lease found them, plus what this replica still holds."""
    rate = lease.rate
    if rate is None:
        return None
    return replace(
        rate,
        remaining_requests=None if rate.remaining_requests is None
        else rate.remaining_requests + lease.requests_left,
        remaining_tokens=None if rate.remaining_tokens is None
        else rate.remaining_tokens + max(0, lease.tokens_left),
    )
