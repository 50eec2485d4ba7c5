"""Token-bucket arithmetic of the per-minute limits."""

from __future__ import annotations

import pytest

from gateway.budget import bucket


def test_refill_is_linear_and_capped() -> None:
    assert bucket.refill(0.0, 30.0, 60) == 30.0
    assert bucket.refill(0.0, 120.0, 60) == 60.0
    assert bucket.refill(-100.0, 60.0, 60) == -40.0  # debt takes longer than a minute
    assert bucket.refill(10.0, -5.0, 60) == 10.0  # a clock stepping back drains nothing


def test_refill_in_steps_equals_refill_at_once() -> None:
    level = -35.0
    for _ in range(100):
        level = bucket.refill(level, 0.7, 600)
    assert level == pytest.approx(bucket.refill(-35.0, 70.0, 600))


@pytest.mark.parametrize(("level", "amount", "per_minute", "wait"), [
    (5.0, 5, 60, 0.0),
    (0.0, 1, 2, 30.0),
    (100.0, 200, 600, 10.0),
    (600.0, 1000, 600, 0.0),  # oversized: needs only a full bucket
    (-400.0, 0, 600, 40.0),  # debt blocks even a request estimated at zero tokens
])
def test_wait(level: float, amount: int, per_minute: int, wait: float) -> None:
    assert bucket.wait_s(level, amount, per_minute) == pytest.approx(wait)


def test_full_in() -> None:
    assert bucket.full_in_s(60.0, 60) == 0.0
    assert bucket.full_in_s(4.0, 5) == pytest.approx(12.0)
    assert bucket.full_in_s(-60.0, 60) == pytest.approx(120.0)
