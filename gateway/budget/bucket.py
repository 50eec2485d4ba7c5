"""Token-bucket arithmetic for per-minute limits (pure). admit.lua repeats these formulas;
the contract tests hold the two to the same answers."""

from __future__ import annotations

SECONDS_PER_MINUTE = 60.0


def refill(level: float, elapsed_s: float, per_minute: int) -> float:
    """The level after `elapsed_s`: a full minute refills the whole capacity, never beyond it.
    A clock that stepped back refills nothing rather than draining the bucket."""
    return min(float(per_minute), level + max(0.0, elapsed_s) * per_minute / SECONDS_PER_MINUTE)


def need(amount: int, per_minute: int) -> int:
    """What must be in the bucket to take `amount`. An amount above the capacity could never
    fit, so it waits for a full bucket instead and leaves the bucket in debt."""
    return min(amount, per_minute)


def wait_s(level: float, amount: int, per_minute: int) -> float:
    """Time until `amount` can be taken (0 when it can be now)."""
    deficit = need(amount, per_minute) - level
    return max(0.0, deficit) * SECONDS_PER_MINUTE / per_minute


def full_in_s(level: float, per_minute: int) -> float:
    """Time until the bucket is full again (OpenAI's x-ratelimit-reset-*)."""
    return max(0.0, per_minute - level) * SECONDS_PER_MINUTE / per_minute
