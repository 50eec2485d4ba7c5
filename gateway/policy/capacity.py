"""Live capacity of a self-hosted backend for one request: does it fit, how loaded is it, and
how fast will it answer. Pure functions of a backend, its `BackendState` and the request.

The engine's gauges lag by up to a scrape interval, so everything here adds what the gateway
sent since that scrape: the requests (queue and batch slots), the KV they may claim and the
prompt tokens still to prefill.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from gateway.policy.schema import TelemetrySpec
from gateway.types import (
    KV_OUTPUT_TOKENS_UNSET,
    Backend,
    BackendState,
    RejectionKind,
    TtftInputs,
    kv_claim_tokens,
)

DEFAULT_PREFILL_TOKENS_PER_S = 4000.0  # a conservative single-GPU prior, replaced when measured
SERVICE_TOKENS = 256  # output length assumed for a queued request when nothing finished lately


@dataclass(frozen=True, slots=True)
class TelemetryPolicy:
    scrape_interval_s: float = 1.0
    scrape_timeout_s: float = 0.5
    stale_after_s: float = 5.0
    fail_closed_when_stale: bool = False
    max_waiting: int = 0
    affinity: bool = True
    affinity_max_load_ratio: float = 1.5


def compile_telemetry(spec: TelemetrySpec) -> TelemetryPolicy:
    return TelemetryPolicy(
        scrape_interval_s=spec.scrape_interval_s,
        scrape_timeout_s=spec.scrape_timeout_s,
        stale_after_s=spec.stale_after_s,
        fail_closed_when_stale=spec.on_stale == "fail_closed",
        max_waiting=spec.max_waiting,
        affinity=spec.affinity.enabled,
        affinity_max_load_ratio=spec.affinity.max_load_ratio,
    )


class Pressure(NamedTuple):
    saturated: str | None  # why the backend should not take this request now; None: it can
    hard: bool  # never send (stale metrics under fail_closed)
    headroom: float  # share of KV free after this request (1.0 when unknown)
    # What `saturated` says, for code: stale metrics, KV full, or queued (only waiting for a
    # batch slot: a wait the predicted TTFT includes, so under a latency target it is judged
    # by that prediction). None exactly when `saturated` is.
    kind: RejectionKind | None = None


ROOM = Pressure(None, False, 1.0)


def kv_need_tokens(
    prompt_tokens: int, max_output_tokens: int | None, state: BackendState | None = None,
    prefix_key: bytes | None = None,
) -> int:
    """KV a request will claim on a backend: without its state the worst case (prompt +
    max_tokens); with it, the prompt less what the prefix cache is expected to hold for this
    request (only where its prefix key was sent there lately: BackendState.prompt_hit_rate),
    plus the backend's measured reply length (a high quantile of recent means, else the
    mean), bounded by max_tokens (kv_claim_tokens)."""
    if state is None:
        return prompt_tokens + (max_output_tokens or KV_OUTPUT_TOKENS_UNSET)
    generation = state.claim_generation_tokens
    if generation is None:
        generation = state.mean_generation_tokens
    return kv_claim_tokens(prompt_tokens, max_output_tokens, generation,
                           state.prompt_hit_rate(prefix_key))


def kv_free_tokens(state: BackendState) -> int | None:
    """capacity × (1 − usage) less what was sent since the scrape, and never more than
    capacity less what all of the gateway's in-flight requests there may claim (an engine
    allocates KV only as it schedules, so a scrape can miss requests already sent); None
    when unknown."""
    load = state.load
    if load is None or load.kv_capacity_tokens is None:
        return None
    used = load.kv_usage or 0.0
    capacity = load.kv_capacity_tokens
    return min(int(capacity * (1.0 - used)) - state.kv_reserved_tokens,
               capacity - state.in_flight_kv_tokens)


def queue_depth(backend: Backend, state: BackendState) -> tuple[int, int]:
    """(running, waiting) as the engine will see them once the gateway's recent sends land."""
    load = state.load
    assert load is not None
    running, waiting = load.running, load.waiting
    # Requests sent since the scrape, and any of the gateway's own in-flight requests the
    # engine had not counted yet (a scrape can land before a just-sent request is
    # scheduled): whatever the gauges say, those are on that engine.
    extra = max(state.sent_since_scrape, state.in_flight - running - waiting)
    slots = backend.engine.max_num_seqs if backend.engine is not None else None
    if slots is None:
        # Without the batch size, a queue is the only sign of a full batch.
        if waiting > 0:
            waiting += extra
        else:
            running += extra
        return running, waiting
    # With it, requests waiting while slots are free are behind a long prefill (the step's
    # token budget), not short of a slot: the engine starts them within a few steps. New
    # sends line up behind them, and whatever exceeds the slots waits for one.
    total = running + waiting + extra
    running = min(total, max(running, slots))
    return running, total - running


def queued_ahead(
    backend: Backend, state: BackendState, depth: tuple[int, int] | None = None
) -> int:
    """How many requests a new one would wait behind for a batch slot (0: it gets one at
    once). With the batch size known, only requests beyond the free slots count; without it,
    any queue means a full batch."""
    running, waiting = depth or queue_depth(backend, state)
    slots = backend.engine.max_num_seqs if backend.engine is not None else None
    if slots is None:
        return waiting + 1 if waiting > 0 else 0
    if running + waiting >= slots:
        return running + waiting - slots + 1
    return 0


def assess(
    backend: Backend, state: BackendState | None, need_tokens: int, now_s: float,
    policy: TelemetryPolicy, depth: tuple[int, int] | None = None,
) -> Pressure:
    if state is None or state.load is None:
        # Never scraped (or not scrapable): judged by its priors and its circuit, and, where
        # the batch size is declared, by the gateway's own requests there. A gateway that
        # has just started sends a burst before its first scrape lands; its own in-flight
        # requests already fill the slots, and queueing behind them is no different.
        slots = backend.engine.max_num_seqs if backend.engine is not None else None
        if state is None or slots is None or state.in_flight < slots:
            return ROOM
        ahead = state.in_flight - slots + 1
        if ahead > policy.max_waiting:
            return Pressure(f"saturated: would wait behind {ahead - 1} of the gateway's own "
                            "requests for a batch slot (not scraped yet)", False, 1.0,
                            RejectionKind.QUEUED)
        return ROOM
    load = state.load
    age = now_s - load.scraped_at_s
    if age > policy.stale_after_s:
        return Pressure(f"metrics stale ({age:.1f} s old)", policy.fail_closed_when_stale, 1.0,
                        RejectionKind.STALE_METRICS)
    free = kv_free_tokens(state)
    headroom = 1.0
    if free is not None and load.kv_capacity_tokens:
        headroom = max(0.0, (free - need_tokens) / load.kv_capacity_tokens)
        if need_tokens > free:
            declared = backend.engine.kv_bytes_per_token if backend.engine else None
            per_token = declared or load.kv_bytes_per_token
            size = f" ({need_tokens * per_token / 2**20:.1f} MiB)" if per_token else ""
            return Pressure(
                f"KV cache: needs {need_tokens} tokens{size}, {max(free, 0)} free",
                False, 0.0, RejectionKind.KV_FULL,
            )
    ahead = queued_ahead(backend, state, depth)
    if ahead > policy.max_waiting:
        return Pressure(f"saturated: would wait behind {ahead - 1} queued requests "
                        "for a batch slot", False, headroom, RejectionKind.QUEUED)
    return Pressure(None, False, headroom)


class Latency(NamedTuple):
    ttft_s: float
    tpot_s: float
    wait_s: float  # the part of TTFT due to load (queue and prefill backlog), not hardware
    inputs: TtftInputs | None = None  # the load the prediction read (None: no live state)
    learned_samples: int = 0  # measurements behind the learned model; 0: the prior was used
    calibration: float = 1.0  # the learned model's median measured ÷ predicted factor


def predict_latency(
    backend: Backend, state: BackendState | None, prompt_tokens: int,
    depth: tuple[int, int] | None = None,
) -> Latency:
    """Predicted TTFT and time per output token, and how much of the TTFT is load.

    Without engine metrics: the backend's learned TTFT model (its inputs then are the
    gateway's own in-flight requests there and their prompts), else the gateway's measured
    EWMA, else the policy's priors. With them,
    once the backend's TTFT model has learned from enough of the gateway's measurements: that
    model applied to the load a request meets now (prefill tokens ahead, requests ahead,
    running batch). Until then the prior: the unloaded TTFT (the engine's fastest recent mean
    when lower than the policy's), plus the time to drain the requests waiting for a batch
    slot (Little's law on the measured finish rate) and to prefill what is queued ahead plus
    this prompt. Per-token time is the batch size over the measured decode rate, never below
    the floor.
    """
    if state is None:
        return Latency(backend.ttft_s, backend.tpot_s, 0.0)
    load = state.load
    model = state.ttft_model
    if load is None:
        tpot_s = state.tpot_s or backend.tpot_s
        if model is None:
            return Latency(state.ttft_s or backend.ttft_s, tpot_s, 0.0)
        # Not scraped (an external API): the model learned from this backend's own first
        # tokens against what the gateway had in flight there, which follows a slowing
        # spill target at once where the EWMA of finished streams lags by their length.
        inputs = state.ttft_inputs(prompt_tokens)
        ttft = model.predict(inputs)
        alone = model.predict(TtftInputs(inputs.prefill_tokens_ahead
                                         - state.queued_prefill_tokens, 0, 0))
        return Latency(ttft, tpot_s, max(0.0, ttft - alone), inputs, model.samples,
                       model.calibration)
    depth = depth or queue_depth(backend, state)
    running = depth[0]
    tpot_floor = min(backend.tpot_s, load.itl_s) if load.itl_s else backend.tpot_s
    tpot = tpot_floor
    if state.decode_tokens_per_s and running:
        tpot = max(tpot_floor, (running + 1) / state.decode_tokens_per_s)
    inputs = state.ttft_inputs(prompt_tokens)
    if model is not None:
        ttft = model.predict(inputs)
        unloaded = model.predict(TtftInputs(inputs.prefill_tokens_ahead
                                            - state.queued_prefill_tokens, 0, 0))
        return Latency(ttft, tpot, max(0.0, ttft - unloaded), inputs, model.samples,
                       model.calibration)
    waiting = queued_ahead(backend, state, depth)
    prefill_rate = max(
        state.prefill_tokens_per_s or 0.0,
        (backend.engine.prefill_tokens_per_s if backend.engine else None)
        or DEFAULT_PREFILL_TOKENS_PER_S,
    )
    base = backend.ttft_s
    if state.engine_ttft_floor_s is not None:
        base = min(base, state.engine_ttft_floor_s)
    queue_s = 0.0
    if waiting:
        finish_rate = load.requests_finished_per_s
        if finish_rate:
            queue_s = waiting / finish_rate
        else:  # nothing finished lately: each queued request waits out a typical reply
            queue_s = waiting * (base + tpot * SERVICE_TOKENS) / max(running, 1)
    wait = queue_s + state.queued_prefill_tokens / prefill_rate
    own = (inputs.prefill_tokens_ahead - state.queued_prefill_tokens) / prefill_rate
    return Latency(base + wait + own, tpot, wait, inputs)
