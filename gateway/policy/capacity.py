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
from gateway.types import Backend, BackendState

# KV a request may claim when the client sets no max_tokens: engines allocate KV as tokens are
# generated, so the typical reply, not the context window, is the honest estimate.
KV_OUTPUT_TOKENS_UNSET = 512
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


ROOM = Pressure(None, False, 1.0)


def kv_need_tokens(prompt_tokens: int, max_output_tokens: int | None) -> int:
    return prompt_tokens + (max_output_tokens or KV_OUTPUT_TOKENS_UNSET)


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
    if waiting > 0:
        waiting += extra  # the batch is full already: every new request queues
    else:
        running += extra
    slots = backend.max_num_seqs
    if slots is not None and running > slots:
        running, waiting = slots, waiting + running - slots
    return running, waiting


def queued_ahead(
    backend: Backend, state: BackendState, depth: tuple[int, int] | None = None
) -> int:
    """How many requests a new one would wait behind (0: it starts at once). The batch is
    full when the engine already queues, or when the known batch slots are all taken."""
    running, waiting = depth or queue_depth(backend, state)
    if waiting > 0 or (backend.max_num_seqs is not None and running >= backend.max_num_seqs):
        return waiting + 1
    return 0


def assess(
    backend: Backend, state: BackendState | None, need_tokens: int, now_s: float,
    policy: TelemetryPolicy, depth: tuple[int, int] | None = None,
) -> Pressure:
    if state is None or state.load is None:
        return ROOM  # never scraped (or not scrapable): judged by its priors and its circuit
    load = state.load
    age = now_s - load.scraped_at_s
    if age > policy.stale_after_s:
        return Pressure(f"metrics stale ({age:.1f} s old)", policy.fail_closed_when_stale, 1.0)
    free = kv_free_tokens(state)
    headroom = 1.0
    if free is not None and load.kv_capacity_tokens:
        headroom = max(0.0, (free - need_tokens) / load.kv_capacity_tokens)
        if need_tokens > free:
            per_token = backend.kv_bytes_per_token or load.kv_bytes_per_token
            size = f" ({need_tokens * per_token / 2**20:.1f} MiB)" if per_token else ""
            return Pressure(
                f"KV cache: needs {need_tokens} tokens{size}, {max(free, 0)} free",
                False, 0.0,
            )
    ahead = queued_ahead(backend, state, depth)
    if ahead > policy.max_waiting:
        return Pressure(f"saturated: would wait behind {ahead - 1} queued requests "
                        "for a batch slot", False, headroom)
    return Pressure(None, False, headroom)


class Latency(NamedTuple):
    ttft_s: float
    tpot_s: float
    wait_s: float  # the part of TTFT due to load (queue and prefill backlog), not hardware


def predict_latency(
    backend: Backend, state: BackendState | None, prompt_tokens: int,
    depth: tuple[int, int] | None = None,
) -> Latency:
    """Predicted TTFT and time per output token, and how much of the TTFT is load.

    Without engine metrics: the gateway's measured EWMA, else the policy's priors. With them:
    the prior as the unloaded floor, plus the time to drain the engine's queue (waiting ÷ the
    measured finish rate, Little's law) and to prefill what is queued ahead plus this prompt
    at the measured prefill rate; per-token time is the batch size over the measured decode
    rate, never below the floor.
    """
    if state is None:
        return Latency(backend.ttft_s, backend.tpot_s, 0.0)
    load = state.load
    if load is None:
        return Latency(state.ttft_s or backend.ttft_s, state.tpot_s or backend.tpot_s, 0.0)
    depth = depth or queue_depth(backend, state)
    running = depth[0]
    waiting = queued_ahead(backend, state, depth)
    prefill_rate = max(
        state.prefill_tokens_per_s or 0.0,
        backend.prefill_tokens_per_s or DEFAULT_PREFILL_TOKENS_PER_S,
    )
    tpot_floor = min(backend.tpot_s, load.itl_s) if load.itl_s else backend.tpot_s
    tpot = tpot_floor
    if state.decode_tokens_per_s and running:
        tpot = max(tpot_floor, (running + 1) / state.decode_tokens_per_s)
    queue_s = 0.0
    if waiting:
        finish_rate = load.requests_finished_per_s
        if finish_rate:
            queue_s = waiting / finish_rate
        else:  # nothing finished lately: each queued request waits out a typical reply
            queue_s = waiting * (backend.ttft_s + tpot * SERVICE_TOKENS) / max(running, 1)
    wait = queue_s + state.queued_prefill_tokens / prefill_rate
    return Latency(backend.ttft_s + wait + prompt_tokens / prefill_rate, tpot, wait)
