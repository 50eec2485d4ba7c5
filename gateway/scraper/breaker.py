"""Circuit breaker for one backend: opens on consecutive failures or a high error rate,
lets one probe through after a cool-down (half-open), closes on the probe's success.

Plain state and arithmetic on a caller-supplied clock, so every transition is unit-tested
without sleeping. The cool-down doubles while probes keep failing (capped), so a dead
backend costs one failed request per cool-down rather than a steady stream of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.types import Circuit


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    failures_to_open: int = 3  # consecutive failed attempts
    error_rate_to_open: float = 0.5  # EWMA share of failures ...
    min_attempts: int = 20  # ... once this many attempts were seen
    cooldown_s: float = 10.0
    max_cooldown_s: float = 120.0
    ewma_alpha: float = 0.1  # weight of the newest attempt in the error rate


class CircuitBreaker:
    __slots__ = (
        "_cooldown_s",
        "attempts",
        "circuit",
        "config",
        "consecutive_failures",
        "error_rate",
        "probing",
        "retry_at_s",
    )

    def __init__(self, config: BreakerConfig) -> None:
        self.config = config
        self.circuit = Circuit.CLOSED
        self.retry_at_s = 0.0
        self.probing = False
        self.consecutive_failures = 0
        self.error_rate = 0.0
        self.attempts = 0
        self._cooldown_s = config.cooldown_s

    def on_dispatch(self, now_s: float) -> None:
        """A request is being sent: past an open circuit's cool-down it is the probe."""
        if self.circuit is Circuit.OPEN and now_s >= self.retry_at_s:
            self.circuit = Circuit.HALF_OPEN
        if self.circuit is Circuit.HALF_OPEN:
            self.probing = True

    def on_success(self) -> None:
        self._observe(failed=False)
        self.consecutive_failures = 0
        if self.circuit is not Circuit.CLOSED:
            self.circuit = Circuit.CLOSED
            self.probing = False
            self._cooldown_s = self.config.cooldown_s
            self.error_rate = 0.0  # a recovered backend starts with a clean record

    def on_failure(self, now_s: float) -> None:
        self._observe(failed=True)
        self.consecutive_failures += 1
        cfg = self.config
        if self.circuit is Circuit.HALF_OPEN:
            self._cooldown_s = min(self._cooldown_s * 2, cfg.max_cooldown_s)
            self._open(now_s)
        elif self.circuit is Circuit.CLOSED and (
            self.consecutive_failures >= cfg.failures_to_open
            or (self.attempts >= cfg.min_attempts and self.error_rate >= cfg.error_rate_to_open)
        ):
            self._open(now_s)

    def on_abandoned(self) -> None:
        """The attempt ended without a verdict (the client went away): free the probe slot."""
        self.probing = False

    def _open(self, now_s: float) -> None:
        self.circuit = Circuit.OPEN
        self.probing = False
        self.retry_at_s = now_s + self._cooldown_s

    def _observe(self, *, failed: bool) -> None:
        self.attempts += 1
        alpha = self.config.ewma_alpha
        self.error_rate += alpha * ((1.0 if failed else 0.0) - self.error_rate)
