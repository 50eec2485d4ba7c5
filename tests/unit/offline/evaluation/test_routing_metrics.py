"""Router metrics on cases small enough to check by hand, and invariants that must hold."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.offline.evaluation.routing_metrics import (
    apgr,
    apgr_interval,
    calls_to_reach,
    cost_saved,
    report_router,
    routing_curve,
    strong_mask,
)

# Weak fails the first two prompts, strong gets all four right: weak 0.5, strong 1.0.
WEAK = np.array([0.0, 0.0, 1.0, 1.0])
STRONG = np.array([1.0, 1.0, 1.0, 1.0])


def test_oracle_router_by_hand() -> None:
    curve = routing_curve(np.array([4.0, 3.0, 2.0, 1.0]), WEAK, STRONG)
    assert curve.strong_share.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert curve.pgr.tolist() == [0.0, 0.5, 1.0, 1.0, 1.0]
    # Trapezoids: 0.0625 + 0.1875 + 0.25 + 0.25.
    assert apgr(curve) == pytest.approx(0.75)


def test_inverted_router_by_hand() -> None:
    curve = routing_curve(np.array([1.0, 2.0, 3.0, 4.0]), WEAK, STRONG)
    assert apgr(curve) == pytest.approx(0.25)


def test_constant_score_is_exactly_random() -> None:
    curve = routing_curve(np.zeros(4), WEAK, STRONG)
    assert curve.strong_share.tolist() == [0.0, 1.0]  # one tie group: one straight segment
    assert apgr(curve) == pytest.approx(0.5)


def _synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    weak = (rng.random(n) < 0.65).astype(float)
    strong = (rng.random(n) < 0.85).astype(float)
    return weak, strong


def test_oracle_beats_random_and_random_is_half() -> None:
    weak, strong = _synthetic(20_000, seed=1)
    oracle = apgr(routing_curve(strong - weak, weak, strong))
    rng = np.random.default_rng(2)
    random_apgr = apgr(routing_curve(rng.random(len(weak)), weak, strong))
    inverted = apgr(routing_curve(weak - strong, weak, strong))
    assert oracle > 1.0  # the oracle overshoots: it never routes prompts the strong model loses
    assert random_apgr == pytest.approx(0.5, abs=0.02)
    assert inverted < 0.0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.booleans(), st.booleans()), min_size=2, max_size=40
    )
)
def test_reversing_the_ranking_mirrors_the_area(rows: list[tuple[int, bool, bool]]) -> None:
    scores = np.array([float(r[0]) for r in rows])
    weak = np.array([float(r[1]) for r in rows])
    strong = np.array([float(r[2]) for r in rows])
    if weak.mean() == strong.mean():
        return
    # PGR_inv(x) = 1 - PGR(1 - x), ties included, so the two areas sum to one.
    total = apgr(routing_curve(scores, weak, strong)) + apgr(routing_curve(-scores, weak, strong))
    assert total == pytest.approx(1.0)


def test_calls_to_reach_95_interpolates_within_a_segment() -> None:
    curve = routing_curve(np.array([4.0, 3.0, 2.0, 1.0]), WEAK, STRONG)
    # Target 0.95: crossed between (0.25, 0.75) and (0.5, 1.0).
    assert calls_to_reach(curve, 0.95) == pytest.approx(0.45)
    assert calls_to_reach(curve, 0.5) == 0.0  # the weak model alone already reaches 50 %


def test_calls_to_reach_for_a_bad_router_needs_more_calls() -> None:
    good = calls_to_reach(routing_curve(np.array([4.0, 3.0, 2.0, 1.0]), WEAK, STRONG))
    bad = calls_to_reach(routing_curve(np.array([1.0, 2.0, 3.0, 4.0]), WEAK, STRONG))
    assert bad > good
    assert bad == pytest.approx(0.95)


def test_strong_mask_takes_the_top_share() -> None:
    mask = strong_mask(np.array([0.1, 0.9, 0.5, 0.7]), 0.5)
    assert mask.tolist() == [False, True, False, True]
    assert strong_mask(np.array([0.1, 0.9]), 0.0).tolist() == [False, False]


def test_cost_saved_by_hand() -> None:
    to_strong = np.array([True, False])
    tokens = np.array([100, 300])
    # All strong: 400 × 10 = 4000; routed: 100 × 10 + 300 × 1 = 1300.
    assert cost_saved(to_strong, tokens, 1.0, 10.0) == pytest.approx(1 - 1300 / 4000)
    assert cost_saved(np.array([True, True]), tokens, 1.0, 10.0) == pytest.approx(0.0)


def test_report_router_combines_the_three() -> None:
    report = report_router(
        np.array([4.0, 3.0, 2.0, 1.0]), WEAK, STRONG, np.array([10, 10, 10, 10]), 1.0, 10.0
    )
    assert report.apgr == pytest.approx(0.75)
    assert report.calls_to_95 == pytest.approx(0.45)
    # 0.45 × 4 → the top 2 prompts go strong: 2×10×10 + 2×10×1 = 220 of 400.
    assert report.cost_saved == pytest.approx(1 - 220 / 400)


def test_undefined_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="equal"):
        routing_curve(np.zeros(2), np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="length"):
        routing_curve(np.zeros(3), WEAK, STRONG)


def test_the_apgr_interval_brackets_the_apgr_and_is_undefined_when_strong_never_wins():
    rng = np.random.default_rng(3)
    difficulty = rng.random(400)
    weak = (rng.random(400) > difficulty).astype(float)  # fails more often on hard prompts
    strong = np.ones(400)
    point = apgr(routing_curve(difficulty, weak, strong))
    low, high = apgr_interval(difficulty, weak, strong, draws=300)
    assert low < point < high and high - low < 0.2
    assert all(math.isnan(v) for v in apgr_interval(difficulty, strong, strong, draws=50))
