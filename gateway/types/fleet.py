"""What the gateway knows of each engine's load: scraped metrics, circuit state, the learned
TTFT model, and the immutable fleet snapshot routing takes once per request."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class BackendLoad:
    """What an engine's Prometheus `/metrics` said at one scrape.

    Gauges are as read; rates and latencies are over the interval since the previous scrape
    (None until two scrapes exist, or when the engine does not export the series).
    `scraped_at_s` is on the monotonic clock of the process that scraped.
    """

    scraped_at_s: float
    engine: str  # "vllm" | "llamacpp" | "sglang"
    running: int
    waiting: int
    kv_usage: float | None = None  # fraction 0..1 of the KV cache in use
    kv_capacity_tokens: int | None = None  # num_gpu_blocks × block_size
    kv_block_size: int | None = None
    kv_bytes_per_token: float | None = None  # kv_cache_memory_bytes ÷ capacity, when exported
    prefix_hit_rate: float | None = None  # hits ÷ queries over the interval (tokens)
    prompt_tokens_per_s: float | None = None
    generation_tokens_per_s: float | None = None
    ttft_s: float | None = None  # mean TTFT of requests finished in the interval
    itl_s: float | None = None  # mean inter-token latency in the interval
    preemptions_per_s: float | None = None
    requests_finished_per_s: float | None = None
    interval_s: float | None = None  # time since the previous scrape


class Circuit(StrEnum):
    CLOSED = "closed"  # serving
    OPEN = "open"  # failing: skipped until retry_at_s
    HALF_OPEN = "half_open"  # cool-down over: one probe may go; its result closes or reopens


@dataclass(frozen=True, slots=True)
class BackendState:
    """Everything the router knows about one backend at decision time: the engine's last
    scrape, the gateway's own measurements, and what the gateway sent since that scrape."""

    load: BackendLoad | None = None
    circuit: Circuit = Circuit.CLOSED
    retry_at_s: float = 0.0  # monotonic; an open circuit admits a probe from then on
    probing: bool = False  # half-open with its probe in flight: nothing else goes
    consecutive_failures: int = 0
    error_rate: float = 0.0  # exponentially weighted share of failed attempts
    ttft_s: float | None = None  # measured by the gateway (EWMA), None until measured
    tpot_s: float | None = None
    in_flight: int = 0  # the gateway's requests there now
    sent_since_scrape: int = 0  # of those, sent after the last scrape (not in its gauges)
    kv_reserved_tokens: int = 0  # KV they may claim: prompt + max output each
    in_flight_kv_tokens: int = 0  # KV all of the gateway's in-flight requests there may claim
    queued_prefill_tokens: int = 0  # prompt tokens of in-flight requests with no first token yet
    prefill_tokens_per_s: float | None = None  # learned capacity: peak recent rates
    decode_tokens_per_s: float | None = None
    tokens_per_hour: float | None = None  # rolling measured throughput (prompt + output)
    # Learned per backend (scraper/ttft_learning.py and the engine's counters), None until
    # measured: TTFT as a function of the load, the mean reply length, the engine's fastest
    # recent mean TTFT (its histogram over one scrape interval: the unloaded floor).
    ttft_model: TtftModel | None = None
    mean_generation_tokens: float | None = None
    # The reply length a KV claim assumes: a high quantile of recent per-interval means
    # (scraper/fleet.py), so a burst of long replies does not over-commit the cache.
    claim_generation_tokens: float | None = None
    engine_ttft_floor_s: float | None = None
    # Prefix/session keys (Profile.affinity_key) the gateway sent here lately, whose KV the
    # engine's prefix cache likely still holds, and the share of the prompt tokens sent here
    # lately that carried one of them (scraper/prefix_warmth.py).
    warm_prefixes: frozenset[bytes] = frozenset()
    warm_prompt_share: float = 0.0

    def prompt_hit_rate(self, prefix_key: bytes | None) -> float:
        """The share of one request's prompt the engine's prefix cache is expected to hold.
        None of it unless its prefix key was sent here lately: a prompt that shares nothing
        claims all of its KV, whatever the engine's average. For one that was, the engine's
        measured hit rate is put on the prompts that can have hit (hits ÷ the share of the
        tokens sent here that carried a warm prefix), at most the whole prompt."""
        if prefix_key is None or prefix_key not in self.warm_prefixes:
            return 0.0
        load = self.load
        hit = load.prefix_hit_rate if load is not None else None
        if not hit or self.warm_prompt_share <= 0.0:
            return 0.0
        return min(1.0, hit / self.warm_prompt_share)

    def ttft_inputs(self, prompt_tokens: int) -> TtftInputs:
        """What a request sent now would find ahead of it: the gateway's own prompt tokens
        not yet prefilled plus this prompt's uncached part, the requests the engine has not
        started (its queue and what was sent since the scrape), and the batch it runs."""
        load = self.load
        hit = (load.prefix_hit_rate or 0.0) if load is not None else 0.0
        running = load.running if load is not None else self.in_flight
        waiting = load.waiting if load is not None else 0
        if load is not None:
            waiting += max(self.sent_since_scrape, self.in_flight - load.running - load.waiting)
        return TtftInputs(
            self.queued_prefill_tokens + prompt_tokens * (1.0 - min(1.0, max(0.0, hit))),
            max(0, waiting), max(0, running),
        )

    def available(self, now_s: float) -> bool:
        """False while the circuit is open, or half-open with its one probe out."""
        if self.circuit is Circuit.CLOSED:
            return True
        if self.probing:
            return False
        return now_s >= self.retry_at_s


# KV a request may claim when neither the client (max_tokens) nor the engine (its measured
# mean reply length) says more: engines allocate KV as tokens are generated, so the typical
# reply, not the context window, is the honest estimate.
KV_OUTPUT_TOKENS_UNSET = 512


def kv_claim_tokens(
    prompt_tokens: int, max_output_tokens: int | None,
    generation_tokens: float | None = None, prefix_hit_rate: float | None = None,
) -> int:
    """KV tokens a request is expected to hold at its peak: the part of its prompt the
    engine's prefix cache does not already hold (`prefix_hit_rate`: this request's expected
    share, BackendState.prompt_hit_rate), plus
    the reply length measured on that engine (`generation_tokens`: the fleet passes a high
    quantile of recent mean lengths), never more than max_tokens."""
    hit = min(1.0, max(0.0, prefix_hit_rate or 0.0))
    output = max_output_tokens or KV_OUTPUT_TOKENS_UNSET
    if generation_tokens is not None and generation_tokens > 0:
        output = min(output, math.ceil(generation_tokens))
    return math.ceil(prompt_tokens * (1.0 - hit)) + output


class TtftInputs(NamedTuple):
    """The load a request meets on arrival, the features TTFT is learned from."""

    prefill_tokens_ahead: float  # uncached prompt tokens to prefill before its first token
    requests_ahead: int  # requests the engine has not started (queued, or just sent)
    running: int  # the batch it joins (decode steps share the GPU with prefill)


@dataclass(frozen=True, slots=True)
class TtftModel:
    """TTFT ≈ base + per-token × prefill ahead + per-request × requests ahead + per-running ×
    batch, fitted per backend on the gateway's own measurements. `samples` counts the
    measurements it rests on; `error_p90` is the recent 90th percentile of
    |log(predicted ÷ measured)| of its predictions made before each measurement;
    `calibration` is the median measured ÷ predicted ratio of the linear fit's recent
    predictions, already folded into the coefficients (shown so an operator sees it)."""

    base_s: float
    per_prefill_token_s: float
    per_request_ahead_s: float
    per_running_s: float
    samples: int
    error_p90: float | None = None
    calibration: float = 1.0

    def predict(self, inputs: TtftInputs, floor_s: float = 0.001) -> float:
        return max(floor_s, self.base_s
                   + self.per_prefill_token_s * inputs.prefill_tokens_ahead
                   + self.per_request_ahead_s * inputs.requests_ahead
                   + self.per_running_s * inputs.running)


@dataclass(frozen=True, slots=True)
class FleetSnapshot:
    """Immutable view of the fleet taken once per request."""

    backends: dict[str, BackendState] = field(default_factory=dict)
    taken_at_s: float = 0.0

    def state(self, backend: str) -> BackendState | None:
        return self.backends.get(backend)

    def is_healthy(self, backend: str) -> bool:
        entry = self.backends.get(backend)
        return entry is None or entry.available(self.taken_at_s)
