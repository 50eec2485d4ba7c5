"""The gateway's own latency measurements of one backend: TTFT and time per output token.

An EWMA feeds routing (cheap to update, follows a drifting backend within a few requests);
a bounded ring of recent samples gives percentiles for the fleet view, computed only when
someone asks.
"""

from __future__ import annotations

from collections import deque

EWMA_ALPHA = 0.2
RECENT_SAMPLES = 256


class LatencyStats:
    __slots__ = ("_tpot_recent", "_ttft_recent", "tpot_s", "ttft_s")

    def __init__(self) -> None:
        self.ttft_s: float | None = None
        self.tpot_s: float | None = None
        self._ttft_recent: deque[float] = deque(maxlen=RECENT_SAMPLES)
        self._tpot_recent: deque[float] = deque(maxlen=RECENT_SAMPLES)

    def observe(self, ttft_s: float | None, tpot_s: float | None) -> None:
        if ttft_s is not None and ttft_s >= 0:
            self.ttft_s = _ewma(self.ttft_s, ttft_s)
            self._ttft_recent.append(ttft_s)
        if tpot_s is not None and tpot_s >= 0:
            self.tpot_s = _ewma(self.tpot_s, tpot_s)
            self._tpot_recent.append(tpot_s)

    def percentiles(self) -> dict[str, float | None]:
        return {
            "ttft_p50_s": percentile(self._ttft_recent, 0.50),
            "ttft_p95_s": percentile(self._ttft_recent, 0.95),
            "ttft_p99_s": percentile(self._ttft_recent, 0.99),
            "tpot_p50_s": percentile(self._tpot_recent, 0.50),
            "tpot_p95_s": percentile(self._tpot_recent, 0.95),
        }

    @property
    def samples(self) -> int:
        return len(self._ttft_recent)


def percentile(samples: deque[float] | list[float], q: float) -> float | None:
    """Nearest-rank percentile (no interpolation: every value reported was observed)."""
    if not samples:
        return None
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, int(q * len(ordered) + 0.5) - 1))
    return ordered[rank]


def split_latency(
    ttft_s: float | None, total_s: float, completion_tokens: int
) -> float | None:
    """Time per output token from a finished request: the decode time over the tokens after
    the first. A whole (non-streamed) reply has no TTFT of its own, so it is not split."""
    if ttft_s is None or completion_tokens < 2:
        return None
    return max(0.0, total_s - ttft_s) / (completion_tokens - 1)


def _ewma(current: float | None, sample: float) -> float:
    return sample if current is None else current + EWMA_ALPHA * (sample - current)
