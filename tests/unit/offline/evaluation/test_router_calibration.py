"""Thresholds and costs per wanted share of strong calls, on hand-computed traffic."""

from __future__ import annotations

import pytest

from gateway.offline.evaluation.router_calibration import Prices, calibrate


def test_each_share_gets_the_threshold_that_sends_it_and_its_cost() -> None:
    p = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.05]
    tokens = [1_000_000] * 10
    rows = calibrate(p, tokens, Prices(1.0, 10.0), shares=(0.1, 0.3, 1.0))
    assert [r.threshold for r in rows] == [0.9, 0.7, 0.05]
    assert [r.strong_calls for r in rows] == [1, 3, 10]
    # 10 M tokens: 1 M at $10 + 9 M at $1 = $19, against $100 all-strong.
    assert rows[0].cost_usd == pytest.approx(19.0) and rows[0].saved == pytest.approx(0.81)
    assert rows[2].saved == pytest.approx(0.0)


def test_ties_go_to_the_strong_side() -> None:
    (row,) = calibrate([0.5, 0.5, 0.5, 0.1], [10, 10, 10, 10], Prices(1, 2), shares=(0.25,))
    assert row.threshold == 0.5 and row.strong_calls == 3


def test_nothing_to_calibrate_is_refused() -> None:
    with pytest.raises(ValueError):
        calibrate([], [], Prices(1, 2))
