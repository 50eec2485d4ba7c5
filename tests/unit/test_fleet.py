"""FleetState: the circuit breaker, the gateway's own latency, and blending recent sends
with scraped gauges."""

from gateway.scraper.breaker import BreakerConfig, CircuitBreaker
from gateway.scraper.fleet import FleetState
from gateway.scraper.latency import LatencyStats, percentile, split_latency
from gateway.types import BackendLoad, Circuit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def load(at: float, **fields: object) -> BackendLoad:
    values: dict[str, object] = {"engine": "vllm", "running": 0, "waiting": 0}
    values.update(fields)
    return BackendLoad(scraped_at_s=at, **values)  # type: ignore[arg-type]


def fail(fleet: FleetState, name: str) -> None:
    fleet.failed(fleet.dispatched(name, 10, 20))


def test_breaker_opens_on_consecutive_failures_probes_once_and_closes_on_success():
    clock = Clock()
    fleet = FleetState(breaker=BreakerConfig(failures_to_open=2, cooldown_s=5), clock=clock)
    fail(fleet, "a")
    assert fleet.snapshot().is_healthy("a")
    fail(fleet, "a")
    assert not fleet.snapshot().is_healthy("a")
    clock.now += 5.1
    assert fleet.snapshot().is_healthy("a")  # cool-down over: a probe may go
    probe = fleet.dispatched("a", 10, 20)
    assert not fleet.snapshot().is_healthy("a")  # only one probe at a time
    assert fleet.snapshot().backends["a"].circuit is Circuit.HALF_OPEN
    fleet.succeeded(probe, 0.1, 0.01)
    state = fleet.snapshot().backends["a"]
    assert state.circuit is Circuit.CLOSED and state.consecutive_failures == 0


def test_a_failed_probe_reopens_with_a_longer_cooldown():
    clock = Clock()
    breaker = CircuitBreaker(BreakerConfig(failures_to_open=1, cooldown_s=5, max_cooldown_s=12))
    breaker.on_failure(clock.now)
    assert breaker.circuit is Circuit.OPEN and breaker.retry_at_s == clock.now + 5
    clock.now += 5
    breaker.on_dispatch(clock.now)
    breaker.on_failure(clock.now)
    assert breaker.circuit is Circuit.OPEN and breaker.retry_at_s == clock.now + 10
    clock.now += 10
    breaker.on_dispatch(clock.now)
    breaker.on_failure(clock.now)
    assert breaker.retry_at_s == clock.now + 12  # capped


def test_breaker_opens_on_error_rate_without_a_failure_streak():
    breaker = CircuitBreaker(BreakerConfig(failures_to_open=100, min_attempts=20,
                                           error_rate_to_open=0.5, ewma_alpha=0.2))
    for i in range(40):
        if i % 4 == 3:
            breaker.on_success()
        else:
            breaker.on_failure(0.0)  # 3 of 4 attempts fail, never 100 in a row
        if breaker.circuit is Circuit.OPEN:
            break
    assert breaker.circuit is Circuit.OPEN and breaker.attempts >= 20


def test_abandoned_attempts_free_the_probe_without_a_verdict():
    clock = Clock()
    fleet = FleetState(breaker=BreakerConfig(failures_to_open=1, cooldown_s=1), clock=clock)
    fail(fleet, "a")
    clock.now += 2
    fleet.abandoned(fleet.dispatched("a", 1, 1))
    state = fleet.snapshot().backends["a"]
    assert state.circuit is Circuit.HALF_OPEN and not state.probing
    assert fleet.snapshot().is_healthy("a")


def test_sends_since_the_last_scrape_are_added_to_its_gauges_until_the_next():
    clock = Clock()
    fleet = FleetState(clock=clock)
    fleet.record_load("a", load(clock.now, running=2, kv_usage=0.5, kv_capacity_tokens=1000))
    clock.now += 0.1
    t1 = fleet.dispatched("a", prompt_tokens=100, kv_tokens=300)
    t2 = fleet.dispatched("a", prompt_tokens=50, kv_tokens=200)
    state = fleet.snapshot().backends["a"]
    assert (state.in_flight, state.sent_since_scrape, state.kv_reserved_tokens) == (2, 2, 500)
    assert state.queued_prefill_tokens == 150
    fleet.first_token(t1)
    assert fleet.snapshot().backends["a"].queued_prefill_tokens == 50
    clock.now += 0.5
    fleet.record_load("a", load(clock.now, running=4))  # the engine now counts both
    state = fleet.snapshot().backends["a"]
    assert (state.sent_since_scrape, state.kv_reserved_tokens, state.in_flight) == (0, 0, 2)
    fleet.succeeded(t1, 0.05, 0.01)
    fleet.succeeded(t2, 0.07, 0.01)
    fleet.succeeded(t2, 0.07, 0.01)  # ending twice changes nothing
    state = fleet.snapshot().backends["a"]
    assert state.in_flight == 0 and state.queued_prefill_tokens == 0
    assert state.ttft_s is not None and 0.05 <= state.ttft_s <= 0.07


def test_snapshots_are_immutable_views():
    fleet = FleetState()
    before = fleet.snapshot()
    fleet.dispatched("a", 1, 1)
    assert "a" not in before.backends and "a" in fleet.snapshot().backends


def test_learned_rates_and_rolling_tokens_per_hour():
    clock = Clock()
    fleet = FleetState(clock=clock)
    for i in range(70):
        clock.now += 1
        fleet.record_load("a", load(clock.now, prompt_tokens_per_s=900.0 + i % 3 * 100,
                                    generation_tokens_per_s=100.0, interval_s=1.0))
    state = fleet.snapshot().backends["a"]
    assert state.prefill_tokens_per_s == 1100.0 and state.decode_tokens_per_s == 100.0
    assert state.tokens_per_hour is not None
    assert abs(state.tokens_per_hour - 1100.0 * 3600) < 0.02 * 1100 * 3600


def test_retain_forgets_backends_removed_from_the_policy():
    fleet = FleetState()
    fleet.dispatched("a", 1, 1)
    fleet.dispatched("b", 1, 1)
    fleet.retain(["b"])
    assert set(fleet.snapshot().backends) == {"b"} and set(fleet.details()) == {"b"}


def test_latency_stats_and_percentiles():
    stats = LatencyStats()
    for ms in range(1, 101):
        stats.observe(ms / 1000, None)
    p = stats.percentiles()
    assert p["ttft_p50_s"] == 0.05 and p["ttft_p99_s"] == 0.099 and p["tpot_p50_s"] is None
    assert percentile([], 0.5) is None
    assert split_latency(0.2, 1.2, 11) == 0.1
    assert split_latency(None, 1.2, 11) is None and split_latency(0.2, 1.2, 1) is None


def test_a_held_request_counts_as_in_flight_and_unsent_until_let_go():
    clock = Clock()
    fleet = FleetState(clock=clock)
    fleet.record_load("a", load(clock.now, running=3))
    fleet.hold("a")
    fleet.hold("a")
    state = fleet.snapshot().backends["a"]
    assert (state.in_flight, state.sent_since_scrape) == (2, 2)
    fleet.record_load("a", load(clock.now + 1, running=3))  # not in any scrape: still held
    assert fleet.snapshot().backends["a"].sent_since_scrape == 2
    fleet.unhold("a")
    ticket = fleet.dispatched("a", 10, 20)  # the attempt counts it from here
    assert fleet.snapshot().backends["a"].in_flight == 2
    fleet.unhold("a")
    fleet.unhold("a")  # more lets-go than holds change nothing
    fleet.succeeded(ticket, 0.05, 0.01)
    state = fleet.snapshot().backends["a"]
    assert (state.in_flight, state.sent_since_scrape) == (0, 0)
