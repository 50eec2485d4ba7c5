"""FleetState: the live health of every backend, as the router sees it.

Until the metrics scraper lands, health is passive: the dispatch step reports each success and
failure, and a backend that fails `failures_to_open` times in a row is skipped for a cool-down
(circuit open), then tried again (half-open) and closed by the first success.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from gateway.types import BackendHealth, FleetSnapshot

_ALL_HEALTHY = FleetSnapshot()


class FleetState:
    def __init__(
        self,
        *,
        failures_to_open: int = 3,
        cooldown_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._failures_to_open = failures_to_open
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._failures: dict[str, int] = {}
        self._open_until: dict[str, float] = {}

    def snapshot(self) -> FleetSnapshot:
        if not self._failures:
            return _ALL_HEALTHY  # the common case: one shared immutable value, no allocation
        now = self._clock()
        health = {
            name: BackendHealth(
                healthy=self._open_until.get(name, 0.0) <= now,
                consecutive_failures=count,
                retry_at_s=self._open_until.get(name, 0.0),
            )
            for name, count in self._failures.items()
        }
        return FleetSnapshot(health=health, taken_at_s=now)

    def record_success(self, backend: str) -> None:
        if backend in self._failures:
            del self._failures[backend]
            self._open_until.pop(backend, None)

    def record_failure(self, backend: str) -> None:
        count = self._failures.get(backend, 0) + 1
        self._failures[backend] = count
        if count >= self._failures_to_open:
            self._open_until[backend] = self._clock() + self._cooldown_s
