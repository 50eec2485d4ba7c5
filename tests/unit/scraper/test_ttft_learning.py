"""The online TTFT model: it recovers how a backend's TTFT grows with its load, stays on the
prior until it has enough samples, and stays finite however long the load stays constant."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.scraper.fleet import GENERATION_WINDOW_SCRAPES, FleetState, claim_generation_tokens
from gateway.scraper.ttft_learning import (
    CALIBRATION_BOUNDS,
    CALIBRATION_WINDOW,
    MIN_CALIBRATION,
    MIN_SAMPLES,
    TtftLearner,
    median_calibration,
    sample_weight,
)
from gateway.types import BackendLoad, TtftInputs, TtftModel


def true_ttft(base: float, per_k: float, per_req: float, per_run: float, x: TtftInputs) -> float:
    return base + per_k * x.prefill_tokens_ahead / 1000 + per_req * x.requests_ahead \
        + per_run * x.running


@settings(max_examples=40, deadline=None)
@given(
    base=st.floats(0.005, 0.3), per_k=st.floats(0.0, 0.5), per_req=st.floats(0.0, 0.3),
    per_run=st.floats(0.0, 0.01), seed=st.integers(0, 2**16),
)
def test_recovers_a_linear_backend_within_a_few_percent(
    base: float, per_k: float, per_req: float, per_run: float, seed: int
) -> None:
    rng = random.Random(seed)
    learner = TtftLearner()
    for _ in range(400):
        x = TtftInputs(rng.uniform(0, 8000), rng.randint(0, 6), rng.randint(0, 48))
        learner.observe(x, true_ttft(base, per_k, per_req, per_run, x))
    model = learner.model()
    assert model is not None and model.samples == 400
    for _ in range(20):
        x = TtftInputs(rng.uniform(0, 8000), rng.randint(0, 6), rng.randint(0, 48))
        assert model.predict(x) == pytest.approx(
            true_ttft(base, per_k, per_req, per_run, x), rel=0.05, abs=0.002
        )
    assert model.error_p90 is not None and model.error_p90 < 0.05


def test_noisy_measurements_give_a_median_ratio_near_one() -> None:
    rng = random.Random(7)
    learner = TtftLearner()
    ratios = []
    for i in range(1500):
        x = TtftInputs(rng.uniform(0, 6000), rng.randint(0, 4), rng.randint(0, 24))
        measured = true_ttft(0.03, 0.12, 0.08, 0.002, x) * math.exp(rng.gauss(0, 0.3))
        model = learner.model()
        if i > 500 and model is not None:
            ratios.append(model.predict(x) / measured)
        learner.observe(x, measured)
    ratios.sort()
    assert 0.85 < ratios[len(ratios) // 2] < 1.18


@pytest.mark.parametrize("sigma", [0.6, 0.9])
def test_widely_spread_measurements_still_give_a_median_ratio_near_one(sigma: float) -> None:
    """A saturated engine's TTFT at a given load spreads log-normally (whether a request
    waits for a batch slot or not): the fit must aim at the median. Weighting by the
    measurement alone predicted exp(-1.5 σ²) of it (0.58 at σ 0.6, 0.30 at σ 0.9)."""
    rng = random.Random(11)
    learner = TtftLearner()
    ratios = []
    for i in range(2000):
        x = TtftInputs(rng.uniform(0, 6000), rng.randint(0, 8), rng.randint(0, 24))
        measured = true_ttft(0.03, 0.12, 0.08, 0.002, x) * math.exp(rng.gauss(0, sigma))
        model = learner.model()
        if i > 500 and model is not None:
            ratios.append(model.predict(x) / measured)
        learner.observe(x, measured)
    ratios.sort()
    assert 0.85 < ratios[len(ratios) // 2] < 1.18


def test_sample_weight_divides_the_squared_error_by_predicted_and_measured() -> None:
    assert sample_weight(1.0, 1.0) == 1.0
    assert sample_weight(16.0, 1.0) == pytest.approx(1 / 8)  # 16^0.75
    assert sample_weight(1.0, 16.0) == pytest.approx(1 / 2)  # 16^0.25
    assert sample_weight(0.0, 0.0) == sample_weight(0.005, 0.005)  # capped, never infinite


def test_median_calibration_needs_enough_ratios_and_is_bounded() -> None:
    assert median_calibration([2.0] * (MIN_CALIBRATION - 1)) == 1.0
    assert median_calibration([0.5, 3.0, 2.0, 2.0, 1.9, 2.1, 100.0, 2.0, 2.0]) == 2.0
    assert median_calibration([1.0, 4.0] * 4) == pytest.approx(2.0)  # geometric, even count
    assert median_calibration([100.0] * 16) == CALIBRATION_BOUNDS[1]
    assert median_calibration([0.001] * 16) == CALIBRATION_BOUNDS[0]


def test_a_backend_that_turns_slower_than_its_inputs_say_is_followed_within_a_window() -> None:
    """What the linear inputs cannot see (here the engine halves its speed at constant
    load) is taken up by the calibration within one window of samples."""
    rng = random.Random(3)
    learner = TtftLearner()

    def draw() -> TtftInputs:
        return TtftInputs(rng.uniform(0, 4000), rng.randint(0, 4), rng.randint(0, 12))

    for _ in range(400):
        x = draw()
        learner.observe(x, true_ttft(0.02, 0.1, 0.05, 0.001, x))
    before = learner.model()
    assert before is not None and before.calibration == pytest.approx(1.0, rel=0.05)
    for _ in range(CALIBRATION_WINDOW):
        x = draw()
        learner.observe(x, 2 * true_ttft(0.02, 0.1, 0.05, 0.001, x))
    after = learner.model()
    assert after is not None and after.calibration > 1.5
    x = TtftInputs(2000, 2, 6)
    assert after.predict(x) == pytest.approx(2 * true_ttft(0.02, 0.1, 0.05, 0.001, x),
                                             rel=0.25)


def test_the_prior_stays_until_enough_samples_and_bad_samples_are_ignored() -> None:
    learner = TtftLearner()
    x = TtftInputs(100, 0, 1)
    for value in (0.0, -1.0, math.nan, math.inf):
        learner.observe(x, value)
    assert learner.samples == 0
    for _ in range(MIN_SAMPLES - 1):
        learner.observe(x, 0.05)
    assert learner.model() is None
    learner.observe(x, 0.05)
    model = learner.model()
    assert model is not None and model.predict(x) == pytest.approx(0.05, rel=0.02)


def test_constant_load_for_a_long_time_does_not_wind_up() -> None:
    learner = TtftLearner()
    x = TtftInputs(500, 0, 2)
    for _ in range(20_000):
        learner.observe(x, 0.04)
    model = learner.model()
    assert model is not None
    assert all(math.isfinite(v) for v in (model.base_s, model.per_prefill_token_s,
                                           model.per_request_ahead_s, model.per_running_s))
    assert model.predict(x) == pytest.approx(0.04, rel=0.02)
    # A burst after the long quiet spell is still learned.
    rng = random.Random(1)
    for _ in range(600):
        y = TtftInputs(rng.uniform(0, 4000), rng.randint(0, 5), 2)
        learner.observe(y, 0.04 + 0.1 * y.prefill_tokens_ahead / 1000 + 0.2 * y.requests_ahead)
    burst = TtftInputs(3000, 4, 2)
    assert learner.model().predict(burst) == pytest.approx(1.14, rel=0.1)


def test_negative_load_coefficients_read_as_zero() -> None:
    model = TtftModel(0.05, 0.0, 0.0, 0.0, samples=30)
    assert model.predict(TtftInputs(10_000, 5, 5)) == 0.05
    assert TtftModel(-1.0, 0.0, 0.0, 0.0, samples=30).predict(TtftInputs(0, 0, 0)) == 0.001


def load(at: float, **fields: object) -> BackendLoad:
    values: dict[str, object] = {"engine": "vllm", "running": 0, "waiting": 0}
    values.update(fields)
    return BackendLoad(scraped_at_s=at, **values)  # type: ignore[arg-type]


def test_fleet_learns_ttft_against_the_load_each_request_met() -> None:
    now = [1000.0]
    fleet = FleetState(clock=lambda: now[0])
    fleet.record_load("a", load(now[0], running=2, waiting=0))
    for i in range(MIN_SAMPLES):
        ticket = fleet.dispatched("a", 1000 + 100 * (i % 5), 2000)
        # What it met: its own prompt, nothing of ours queued ahead, the engine's batch.
        assert ticket.inputs == TtftInputs(1000 + 100 * (i % 5), 0, 2)
        now[0] += 0.02 + 0.0001 * (1000 + 100 * (i % 5))  # the TTFT, learned on arrival
        fleet.first_token(ticket)
        fleet.succeeded(ticket, 5.0, 0.01)  # the end of the stream teaches it nothing more
    state = fleet.snapshot().backends["a"]
    assert state.ttft_model is not None and state.ttft_model.samples == MIN_SAMPLES
    assert fleet.details()["a"]["ttft_learned_samples"] == MIN_SAMPLES
    assert state.ttft_model.predict(TtftInputs(1200, 0, 2)) == \
        pytest.approx(0.14, rel=0.05)


def test_fleet_learns_mean_reply_length_and_engine_ttft_floor_and_reserves_by_them() -> None:
    now = [1000.0]
    fleet = FleetState(clock=lambda: now[0])
    fleet.record_load("a", load(now[0], requests_finished_per_s=4.0,
                                generation_tokens_per_s=200.0, ttft_s=0.08,
                                prefix_hit_rate=0.5, interval_s=1.0))
    now[0] += 1
    fleet.record_load("a", load(now[0], requests_finished_per_s=2.0,
                                generation_tokens_per_s=100.0, ttft_s=0.03,
                                prefix_hit_rate=0.5, interval_s=1.0))
    state = fleet.snapshot().backends["a"]
    assert state.mean_generation_tokens == 50.0 and state.engine_ttft_floor_s == 0.03
    now[0] += 0.1
    # max_tokens 500 on a 1,000-token prompt that shares no prefix (the engine's 50 % hits
    # are other prompts'): all of it, and replies average 50 tokens.
    fleet.dispatched("a", 1000, 1500)
    state = fleet.snapshot().backends["a"]
    assert state.kv_reserved_tokens == 1050 and state.in_flight_kv_tokens == 1050
    fleet.dispatched("a", 1000, 1010)  # max_tokens 10 bounds the expected reply
    assert fleet.snapshot().backends["a"].kv_reserved_tokens == 1050 + 1010


def test_claim_generation_tokens_is_a_high_quantile_of_interval_means_never_below_the_mean(
) -> None:
    means = [40.0, 42.0, 38.0, 41.0, 39.0, 40.0, 43.0, 40.0, 90.0, 41.0]
    assert claim_generation_tokens(means, 41.0) == 43.0  # p90 of ten: the 9th smallest
    assert claim_generation_tokens(means, 60.0) == 60.0
    assert claim_generation_tokens([], 41.0) == 41.0


def test_fleet_claims_kv_for_a_burst_of_long_replies_not_for_the_mean() -> None:
    """Replies averaging 40 tokens, with one scrape interval in five at 100: KV is held for
    the long interval's length (the mean of ~52 would over-commit during such a burst),
    bounded by max_tokens."""
    now = [1000.0]
    fleet = FleetState(clock=lambda: now[0])
    for i in range(GENERATION_WINDOW_SCRAPES):
        reply = 100.0 if i % 5 == 4 else 40.0
        fleet.record_load("a", load(now[0], reply_tokens=reply))
        now[0] += 1
    state = fleet.snapshot().backends["a"]
    assert state.mean_generation_tokens is not None and state.mean_generation_tokens < 70
    assert state.claim_generation_tokens == 100.0
    fleet.dispatched("a", 1000, 1500)
    assert fleet.snapshot().backends["a"].kv_reserved_tokens == 1000 + 100
    fleet.dispatched("a", 1000, 1064)  # max_tokens 64 bounds it
    assert fleet.snapshot().backends["a"].kv_reserved_tokens == 1100 + 1064


def test_long_replies_are_measured_whole_though_they_finish_intervals_after_they_began() -> None:
    """Four 1,000-token replies decode over four 0.25 s scrapes and all finish in the last:
    without the engine's per-request histogram, the tokens of the intervals in which none
    finished count toward the next that does (one interval's tokens alone read 250)."""
    now = [1000.0]
    fleet = FleetState(clock=lambda: now[0])
    for finished in (0.0, 0.0, 0.0, 16.0):  # per second: 4 requests in the last 0.25 s
        now[0] += 0.25
        fleet.record_load("a", load(now[0], generation_tokens_per_s=4000.0,
                                    requests_finished_per_s=finished, interval_s=0.25))
    state = fleet.snapshot().backends["a"]
    assert state.mean_generation_tokens == 1000.0 and state.claim_generation_tokens == 1000.0
    # The engine's histogram, where exported, is the measurement itself.
    now[0] += 0.25
    fleet.record_load("a", load(now[0], generation_tokens_per_s=4000.0,
                                requests_finished_per_s=16.0, reply_tokens=1000.0,
                                interval_s=0.25))
    assert fleet.snapshot().backends["a"].mean_generation_tokens == 1000.0


def test_tokens_carried_toward_a_reply_length_are_dropped_when_the_engine_restarts() -> None:
    """A scrape without an interval (a new server behind the URL) has no baseline: tokens of
    requests it never finished are not added to the next replies."""
    now = [1000.0]
    fleet = FleetState(clock=lambda: now[0])
    for _ in range(3):  # 3,000 tokens of replies the old server never finished
        now[0] += 1
        fleet.record_load("a", load(now[0], generation_tokens_per_s=1000.0,
                                    requests_finished_per_s=0.0, interval_s=1.0))
    fleet.record_load("a", load(now[0] + 1, generation_tokens_per_s=None))  # restarted
    fleet.record_load("a", load(now[0] + 2, generation_tokens_per_s=200.0,
                                requests_finished_per_s=2.0, interval_s=1.0))
    assert fleet.snapshot().backends["a"].mean_generation_tokens == 100.0
