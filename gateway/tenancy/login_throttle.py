"""Back-off for wrong admin keys, per client address and for the whole gateway, so the key
cannot be guessed at line rate while its real holder is kept out for seconds, not hours.

Per address: a few wrong keys are free, then each one doubles the wait before the next try is
even looked at (1 s, 2 s, 4 s ... capped). A try made while waiting is refused unexamined and
does not lengthen the wait, so an attack that stops leaves at most the cap to wait out. For
everyone: a bucket of wrong keys that refills steadily; while it is empty, every address
waits for the next token (an attack spread over many addresses). A right key clears its
address. One process's memory: each replica (and worker) throttles on its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_FAILURES = 10
FIRST_WAIT_S = 1.0
MAX_WAIT_S = 30.0
FORGET_AFTER_S = 900.0  # an address with no wrong key for this long starts afresh
GLOBAL_BURST = 60  # wrong keys from anywhere before the global bucket runs dry
GLOBAL_PER_S = 1.0  # its refill
MAX_ADDRESSES = 10_000


@dataclass(slots=True)
class _Address:
    failures: int = 0
    last_s: float = 0.0
    blocked_until_s: float = 0.0


class LoginThrottle:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._addresses: dict[str, _Address] = {}
        self._tokens = float(GLOBAL_BURST)
        self._refilled_s = clock()

    def wait_s(self, address: str) -> float:
        """0 when a try from `address` may be checked now, else how long until it may."""
        now = self._clock()
        self._refill(now)
        entry = self._addresses.get(address)
        own = max(0.0, entry.blocked_until_s - now) if entry is not None else 0.0
        everyone = 0.0 if self._tokens >= 1 else (1 - self._tokens) / GLOBAL_PER_S
        return max(own, everyone)

    def failed(self, address: str) -> float:
        """A wrong key from `address`; returns how long it must now wait (0: none)."""
        now = self._clock()
        self._refill(now)
        self._tokens = max(0.0, self._tokens - 1)
        entry = self._addresses.get(address)
        if entry is None or now - entry.last_s > FORGET_AFTER_S:
            if len(self._addresses) >= MAX_ADDRESSES:
                self._forget_oldest()
            entry = self._addresses[address] = _Address()
        entry.failures += 1
        entry.last_s = now
        beyond = entry.failures - FREE_FAILURES
        if beyond > 0:
            wait = min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** min(beyond - 1, 30))
            entry.blocked_until_s = now + wait
        return self.wait_s(address)

    def succeeded(self, address: str) -> None:
        self._addresses.pop(address, None)

    def _refill(self, now: float) -> None:
        self._tokens = min(float(GLOBAL_BURST),
                           self._tokens + (now - self._refilled_s) * GLOBAL_PER_S)
        self._refilled_s = now

    def _forget_oldest(self) -> None:
        oldest = sorted(self._addresses.items(), key=lambda kv: kv[1].last_s)
        for address, _ in oldest[: len(oldest) // 2]:
            del self._addresses[address]


def retry_after(wait_s: float) -> str:
    """The Retry-After header's whole seconds, never 0 for a refusal."""
    return str(max(1, math.ceil(wait_s)))
