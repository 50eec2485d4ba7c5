"""Summaries of one measured load window: requests/s, latency and TTFT percentiles, errors, and the
load generator's own CPU use.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

NO_CONTENT = -1  # pseudo-status: a 200 stream that never carried a content token


@dataclass(frozen=True, slots=True)
class WindowSamples:
    """What one load generator process saw inside the window (picklable, sent to the parent)."""

    latencies_ns: bytes  # array('q') of successful requests completed inside the window
    ttfts_ns: bytes
    statuses: dict[int, int]  # failures by HTTP status (or NO_CONTENT)
    transport_errors: int
    cpu_s: float  # this process's own CPU time over the window


@dataclass(frozen=True, slots=True)
class Percentiles:
    p50_ms: float
    p90_ms: float
    p99_ms: float

    @classmethod
    def of(cls, values_ns: array[int]) -> Percentiles | None:
        if not values_ns:
            return None
        ordered = sorted(values_ns)
        return cls(*(_nearest_rank(ordered, p) / 1e6 for p in (50.0, 90.0, 99.0)))


def _nearest_rank(ordered: list[int], percentile: float) -> int:
    rank = max(1, math.ceil(percentile / 100.0 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class LoadResult:
    """One measured window, all load generator processes merged."""

    concurrency: int
    duration_s: float
    ok: int
    errors: int
    error_kinds: dict[str, int]
    latency: Percentiles | None
    ttft: Percentiles | None  # None unless the requests were streaming
    loadgen_cpu_s: float
    probe_delta: tuple[float, ...] | None  # the caller's probe readings, end minus start

    @property
    def rps(self) -> float:
        return self.ok / self.duration_s

    @property
    def loadgen_cores(self) -> float:
        return self.loadgen_cpu_s / self.duration_s


def summarize(
    samples: Sequence[WindowSamples],
    concurrency: int,
    duration_s: float,
    stream: bool,
    probe_delta: tuple[float, ...] | None,
) -> LoadResult:
    latencies: array[int] = array("q")
    ttfts: array[int] = array("q")
    kinds: Counter[str] = Counter()
    for s in samples:
        latencies.frombytes(s.latencies_ns)
        ttfts.frombytes(s.ttfts_ns)
        for status, count in s.statuses.items():
            kinds["no content" if status == NO_CONTENT else f"HTTP {status}"] += count
        if s.transport_errors:
            kinds["connection"] += s.transport_errors
    return LoadResult(
        concurrency=concurrency,
        duration_s=duration_s,
        ok=len(latencies),
        errors=sum(kinds.values()),
        error_kinds=dict(kinds),
        latency=Percentiles.of(latencies),
        ttft=Percentiles.of(ttfts) if stream else None,
        loadgen_cpu_s=sum(s.cpu_s for s in samples),
        probe_delta=probe_delta,
    )


def describe(result: LoadResult) -> str:
    """One line: throughput, latency percentiles, TTFT, errors, the generator's own CPU."""
    parts = [f"c={result.concurrency:<3} {result.rps:>9,.0f} req/s"]
    if result.latency:
        lat = result.latency
        parts.append(f"p50 {lat.p50_ms:7.3f}  p90 {lat.p90_ms:7.3f}  p99 {lat.p99_ms:7.3f} ms")
    if result.ttft:
        ttft = result.ttft
        parts.append(
            f"TTFT p50 {ttft.p50_ms:7.3f}  p90 {ttft.p90_ms:7.3f}  p99 {ttft.p99_ms:7.3f} ms"
        )
    parts.append(f"errors {result.errors}")
    if result.error_kinds:
        parts.append(str(result.error_kinds))
    parts.append(f"loadgen CPU {result.loadgen_cores:.2f} cores")
    return "  ".join(parts)
