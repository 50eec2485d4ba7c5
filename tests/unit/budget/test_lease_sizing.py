"""How big a lease a replica asks for."""

from __future__ import annotations

from gateway.budget.lease_sizing import Demand, LeaseSize, size_lease
from gateway.budget.limits import AdmitRequest, BudgetLimits, RateLimits, ScopeLimits


def request(*scopes: ScopeLimits, cost: int = 1000, tokens: int = 100) -> AdmitRequest:
    return AdmitRequest("r", "t", scopes, cost, tokens, "2026-11-22", "2026-11")


def busy(rate_per_s: float, cost: float = 1000, tokens: float = 100, peak: int = 4) -> Demand:
    return Demand(since=0.0, rate_per_s=rate_per_s, cost=cost, tokens=tokens,
                  peak_in_flight=peak)


def size(req: AdmitRequest, demand: Demand, max_requests: int = 64) -> LeaseSize:
    return size_lease(req, demand, now=1.0, lease_s=0.5, max_requests=max_requests, share=0.02)


def test_a_quiet_key_asks_for_one_request_at_a_time() -> None:
    assert size(request(), busy(0.5)) == LeaseSize(1, 1, 1000, 100)


def test_a_busy_key_asks_for_what_lasts_the_lease_capped() -> None:
    assert size(request(), busy(40)) == LeaseSize(25, 7, 25_000, 2_500)
    assert size(request(), busy(10_000)).requests == 64


def test_the_lease_covers_this_request_plus_typical_ones() -> None:
    got = size(request(cost=5000, tokens=900), busy(40, cost=1000, tokens=100))
    assert (got.cost_micro_usd, got.tokens) == (5000 + 24 * 1000, 900 + 24 * 100)


def test_no_lease_holds_more_than_its_share_of_a_budget() -> None:
    scope = ScopeLimits("tenant", BudgetLimits(daily_micro_usd=500_000))  # 2 %: 10,000
    got = size(request(scope), busy(1000))
    assert got.requests == 10 and got.cost_micro_usd <= 10_000
    tight = ScopeLimits("tenant", BudgetLimits(monthly_tokens=2_000))  # 2 %: 40 tokens
    assert size(request(tight), busy(1000)).requests == 1


def test_rate_limits_bound_permits_tokens_and_slots() -> None:
    assert size(request(ScopeLimits("key:k", None, RateLimits(rpm=60))), busy(1000)).requests == 6
    tpm = size(request(ScopeLimits("key:k", None, RateLimits(tpm=2_000))), busy(1000))
    assert tpm.requests == 2 and tpm.tokens <= 200
    slots = size(request(ScopeLimits("key:k", None, RateLimits(concurrent=8))), busy(1000, peak=30))
    assert slots.slots == 2


def test_a_refused_lease_means_single_requests_for_a_while() -> None:
    demand = busy(1000)
    demand.tight_until = 2.0
    assert size(request(), demand).requests == 1


def test_demand_grows_within_a_window_and_shrinks_at_its_end() -> None:
    demand = Demand(since=0.0)
    for i in range(20):
        demand.saw(request(), now=0.001 * (i + 1), window_s=0.5)
    assert demand.rate_per_s >= 900
    demand.saw(request(), now=2.0, window_s=0.5)
    assert demand.rate_per_s < 20
