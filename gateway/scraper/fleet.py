"""FleetState: the live state of every backend, as the router sees it.

Three sources meet here: the engines' scraped `/metrics` (via `record_load`), the gateway's
own measurements of every attempt (latency, errors, the circuit breaker), and what the gateway
has sent since the last scrape. Gauges lag by a scrape interval, so requests sent after it are
added on top (count, KV they may claim, prefill still queued); a burst therefore spreads out
instead of piling onto the replica that looked idle a second ago.

Events only mark a backend dirty; `snapshot()` folds the dirty ones into a fresh dict of
frozen `BackendState`s (copy on write), so a snapshot is an immutable view routing reads
without locks, and a burst of events between two requests costs one rebuild.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gateway.scraper.breaker import BreakerConfig, CircuitBreaker
from gateway.scraper.latency import LatencyStats, percentile
from gateway.scraper.prefix_warmth import PrefixWarmth
from gateway.scraper.ttft_learning import TtftLearner
from gateway.types import BackendLoad, BackendState, FleetSnapshot, TtftInputs, kv_claim_tokens

PEAK_WINDOW_SCRAPES = 120  # learned capacity = the best rate seen over the last ~2 minutes
THROUGHPUT_WINDOW_S = 900.0  # effective price: tokens per hour over the last 15 minutes
MIN_THROUGHPUT_WINDOW_S = 60.0
GENERATION_EWMA_ALPHA = 0.1  # mean reply length: per scrape interval, smoothed over ~10 s
# KV is claimed for the 90th percentile of the per-interval mean reply lengths of the last 30
# scrapes: a burst of long replies then finds its room already held (claims at the mean
# over-committed the KV cache, and the engine preempted), while a claim stays far below
# max_tokens (a per-request high quantile would approach it and spill needlessly).
GENERATION_CLAIM_QUANTILE = 0.90
GENERATION_WINDOW_SCRAPES = 30


class Ticket:
    """One attempt on one backend, from dispatch to its end."""

    __slots__ = (
        "backend",
        "done",
        "inputs",
        "kv_tokens",
        "prefilling",
        "prompt_tokens",
        "sent_at_s",
        "since_scrape",
    )

    def __init__(
        self, backend: str, sent_at_s: float, prompt_tokens: int, kv_tokens: int,
        inputs: TtftInputs | None = None,
    ):
        self.backend = backend
        self.inputs = inputs  # the load it met when sent: what its TTFT is learned against
        self.sent_at_s = sent_at_s
        self.prompt_tokens = prompt_tokens
        self.kv_tokens = kv_tokens
        self.since_scrape = True
        self.prefilling = True
        self.done = False


@dataclass(slots=True)
class _Backend:
    breaker: CircuitBreaker
    latency: LatencyStats
    ttft: TtftLearner
    prefixes: PrefixWarmth  # the prefix/session keys sent there lately
    load: BackendLoad | None = None
    scrape_error: str | None = None
    scrape_failures: int = 0
    in_flight: int = 0
    in_flight_kv_tokens: int = 0
    sent_since_scrape: int = 0
    held: int = 0  # decided for this backend, not dispatched yet (hold/unhold)
    kv_reserved_tokens: int = 0
    queued_prefill_tokens: int = 0
    prefill_peaks: deque[float] | None = None
    decode_peaks: deque[float] | None = None
    tokens_window: deque[tuple[float, float, float]] | None = None  # (at, tokens, interval)
    window_tokens: float = 0.0
    window_covered_s: float = 0.0
    # Derived once per scrape, not per request.
    prefill_peak: float | None = None
    decode_peak: float | None = None
    tokens_per_hour: float | None = None
    mean_generation_tokens: float | None = None  # mean reply length, smoothed (_reply_length)
    unfinished_tokens: float = 0.0  # generated since the last interval in which any finished
    generation_means: deque[float] | None = None  # per scrape interval, the last few
    claim_generation_tokens: float | None = None  # the reply length KV is claimed for
    engine_ttft_means: deque[float] | None = None
    engine_ttft_floor: float | None = None


class FleetState:
    def __init__(
        self,
        *,
        breaker: BreakerConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._breaker_config = breaker or BreakerConfig()
        self._clock = clock
        self._backends: dict[str, _Backend] = {}
        self._states: dict[str, BackendState] = {}
        self._tickets: dict[str, set[Ticket]] = {}  # since-scrape tickets per backend
        self._dirty: set[str] = set()

    # ---- routing side -------------------------------------------------------------------
    def snapshot(self) -> FleetSnapshot:
        if self._dirty:
            self._rebuild()
        return FleetSnapshot(self._states, self._clock())

    def dispatched(
        self, backend: str, prompt_tokens: int, kv_tokens: int, prefix_key: bytes | None = None
    ) -> Ticket:
        """`kv_tokens`: the most KV the request may claim (prompt + max_tokens); what is held
        against the engine's free KV is the expected claim (kv_claim_tokens), bounded by it.
        `prefix_key` (Profile.affinity_key): only a prompt whose key was sent there lately
        has its cached prefix discounted, and its key is warm there from now on."""
        entry = self._entry(backend)
        now = self._clock()
        state = _state_of(entry, now)
        kv_tokens = min(kv_tokens, kv_claim_tokens(
            prompt_tokens, max(1, kv_tokens - prompt_tokens), entry.claim_generation_tokens,
            state.prompt_hit_rate(prefix_key),
        ))
        inputs = state.ttft_inputs(prompt_tokens)
        entry.prefixes.sent(prefix_key, prompt_tokens, now)
        ticket = Ticket(backend, now, prompt_tokens, kv_tokens, inputs)
        entry.breaker.on_dispatch(now)
        entry.in_flight += 1
        entry.in_flight_kv_tokens += kv_tokens
        entry.sent_since_scrape += 1
        entry.kv_reserved_tokens += kv_tokens
        entry.queued_prefill_tokens += prompt_tokens
        self._tickets.setdefault(backend, set()).add(ticket)
        self._dirty.add(backend)
        return ticket

    def first_token(self, ticket: Ticket) -> None:
        """The stream's first token arrived: its prefill is done, and its TTFT (from this
        attempt's send) teaches the backend's TTFT model at once, not when the stream ends,
        so the model follows a burst while it happens."""
        if ticket.prefilling and not ticket.done:
            ticket.prefilling = False
            entry = self._backends.get(ticket.backend)
            if entry is not None:
                entry.queued_prefill_tokens -= ticket.prompt_tokens
                if ticket.inputs is not None:
                    entry.ttft.observe(ticket.inputs, self._clock() - ticket.sent_at_s)
                self._dirty.add(ticket.backend)

    def succeeded(self, ticket: Ticket, ttft_s: float | None, tpot_s: float | None) -> None:
        entry = self._release(ticket)
        if entry is not None:
            entry.breaker.on_success()
            entry.latency.observe(ttft_s, tpot_s)
            self._dirty.add(ticket.backend)

    def failed(self, ticket: Ticket) -> None:
        entry = self._release(ticket)
        if entry is not None:
            entry.breaker.on_failure(self._clock())
            self._dirty.add(ticket.backend)

    def abandoned(self, ticket: Ticket) -> None:
        """Ended without a verdict on the backend (client left, request refused as invalid)."""
        entry = self._release(ticket)
        if entry is not None:
            entry.breaker.on_abandoned()
            self._dirty.add(ticket.backend)

    def hold(self, backend: str) -> None:
        """A request decided for `backend` whose limits and budget are still being checked
        (awaits, during which other requests decide): counted as in flight there until
        `unhold`, so a burst decided before any of it is dispatched still sees the batch
        fill, rather than every request of it picking the same idle engine."""
        self._entry(backend).held += 1
        self._dirty.add(backend)

    def unhold(self, backend: str) -> None:
        """The held request is dispatched (its attempt counts it from now) or refused."""
        entry = self._backends.get(backend)
        if entry is not None and entry.held > 0:
            entry.held -= 1
            self._dirty.add(backend)

    # ---- scraper side (the poller's LoadSink) ------------------------------------------------
    def record_load(self, backend: str, load: BackendLoad) -> None:
        entry = self._entry(backend)
        entry.load = load
        entry.scrape_error = None
        # Requests sent before the scrape are in its gauges now; count only later ones on top.
        for ticket in list(self._tickets.get(backend, ())):
            if ticket.sent_at_s <= load.scraped_at_s:
                self._forget_since_scrape(entry, ticket)
        self._learn_rates(entry, load)
        self._dirty.add(backend)

    def record_scrape_error(self, backend: str, error: str) -> None:
        entry = self._entry(backend)
        entry.scrape_error = error
        entry.scrape_failures += 1

    def retain(self, backends: Iterable[str]) -> None:
        """Drop state of backends no longer in the policy (after a reload)."""
        keep = set(backends)
        for name in [n for n in self._backends if n not in keep]:
            del self._backends[name]
            self._tickets.pop(name, None)
        self._states = {n: s for n, s in self._states.items() if n in keep}

    # ---- views ------------------------------------------------------------------------------
    def details(self) -> dict[str, dict[str, object]]:
        """Per backend: the routing state plus percentiles and scrape errors (for operators)."""
        if self._dirty:
            self._rebuild()
        now = self._clock()
        out: dict[str, dict[str, object]] = {}
        for name, entry in self._backends.items():
            state = self._states.get(name) or BackendState()  # scrape errors only, so far
            load = entry.load
            out[name] = {
                "state": state,
                "scrape_age_s": None if load is None else max(0.0, now - load.scraped_at_s),
                "scrape_error": entry.scrape_error,
                "scrape_failures": entry.scrape_failures,
                "samples": entry.latency.samples,
                "ttft_learned_samples": entry.ttft.samples,
                **entry.latency.percentiles(),
            }
        return out

    # ---- internals --------------------------------------------------------------------------
    def _entry(self, backend: str) -> _Backend:
        entry = self._backends.get(backend)
        if entry is None:
            entry = _Backend(CircuitBreaker(self._breaker_config), LatencyStats(),
                             TtftLearner(), PrefixWarmth())
            self._backends[backend] = entry
        return entry

    def _release(self, ticket: Ticket) -> _Backend | None:
        if ticket.done:
            return None
        ticket.done = True
        entry = self._backends.get(ticket.backend)
        if entry is None:
            return None
        entry.in_flight -= 1
        entry.in_flight_kv_tokens -= ticket.kv_tokens
        if ticket.prefilling:
            entry.queued_prefill_tokens -= ticket.prompt_tokens
        if ticket.since_scrape:
            self._forget_since_scrape(entry, ticket)
        return entry

    def _forget_since_scrape(self, entry: _Backend, ticket: Ticket) -> None:
        if ticket.since_scrape:
            ticket.since_scrape = False
            entry.sent_since_scrape -= 1
            entry.kv_reserved_tokens -= ticket.kv_tokens
            self._tickets[ticket.backend].discard(ticket)

    def _learn_rates(self, entry: _Backend, load: BackendLoad) -> None:
        if entry.prefill_peaks is None or entry.decode_peaks is None:
            entry.prefill_peaks = deque(maxlen=PEAK_WINDOW_SCRAPES)
            entry.decode_peaks = deque(maxlen=PEAK_WINDOW_SCRAPES)
        if load.prompt_tokens_per_s is not None:
            entry.prefill_peaks.append(load.prompt_tokens_per_s)
            entry.prefill_peak = _peak(entry.prefill_peaks)
        if load.generation_tokens_per_s is not None:
            entry.decode_peaks.append(load.generation_tokens_per_s)
            entry.decode_peak = _peak(entry.decode_peaks)
        _learn_engine_means(entry, load)
        if load.interval_s and load.prompt_tokens_per_s is not None:
            if entry.tokens_window is None:
                entry.tokens_window = deque()
            window = entry.tokens_window
            tokens = (load.prompt_tokens_per_s + (load.generation_tokens_per_s or 0.0))
            window.append((load.scraped_at_s, tokens * load.interval_s, load.interval_s))
            entry.window_tokens += tokens * load.interval_s
            entry.window_covered_s += load.interval_s
            while window and window[0][0] < load.scraped_at_s - THROUGHPUT_WINDOW_S:
                _, old_tokens, old_interval = window.popleft()
                entry.window_tokens -= old_tokens
                entry.window_covered_s -= old_interval
            entry.tokens_per_hour = (
                max(0.0, entry.window_tokens) / entry.window_covered_s * 3600
                if entry.window_covered_s >= MIN_THROUGHPUT_WINDOW_S else None
            )

    def _rebuild(self) -> None:
        """Fold every backend changed since the last snapshot into a fresh dict: events only
        mark a backend dirty, so a burst of them between two snapshots costs one rebuild."""
        states = dict(self._states)
        now = self._clock()
        for name in self._dirty:
            entry = self._backends.get(name)
            if entry is not None:
                states[name] = _state_of(entry, now)
        self._dirty.clear()
        self._states = states


def _state_of(entry: _Backend, now_s: float) -> BackendState:
    breaker = entry.breaker
    return BackendState(
        load=entry.load,
        circuit=breaker.circuit,
        retry_at_s=breaker.retry_at_s,
        probing=breaker.probing,
        consecutive_failures=breaker.consecutive_failures,
        error_rate=breaker.error_rate,
        ttft_s=entry.latency.ttft_s,
        tpot_s=entry.latency.tpot_s,
        # Held requests are on their way: in flight for every decision made meanwhile, and
        # in no scrape yet.
        in_flight=entry.in_flight + entry.held,
        in_flight_kv_tokens=max(0, entry.in_flight_kv_tokens),
        sent_since_scrape=entry.sent_since_scrape + entry.held,
        kv_reserved_tokens=entry.kv_reserved_tokens,
        queued_prefill_tokens=max(0, entry.queued_prefill_tokens),
        prefill_tokens_per_s=entry.prefill_peak,
        decode_tokens_per_s=entry.decode_peak,
        tokens_per_hour=entry.tokens_per_hour,
        ttft_model=entry.ttft.model(),
        mean_generation_tokens=entry.mean_generation_tokens,
        claim_generation_tokens=entry.claim_generation_tokens,
        engine_ttft_floor_s=entry.engine_ttft_floor,
        warm_prefixes=entry.prefixes.keys(now_s),
        warm_prompt_share=entry.prefixes.share(),
    )


def _learn_engine_means(entry: _Backend, load: BackendLoad) -> None:
    """From the engine's counters and histograms over one scrape interval: the mean reply
    length (smoothed), the length KV is claimed for (claim_generation_tokens) and the fastest
    recent mean TTFT (the unloaded floor)."""
    sample = _reply_length(entry, load)
    if sample is not None:
        current = entry.mean_generation_tokens
        entry.mean_generation_tokens = sample if current is None else (
            current + GENERATION_EWMA_ALPHA * (sample - current)
        )
        if entry.generation_means is None:
            entry.generation_means = deque(maxlen=GENERATION_WINDOW_SCRAPES)
        entry.generation_means.append(sample)
        entry.claim_generation_tokens = claim_generation_tokens(
            entry.generation_means, entry.mean_generation_tokens
        )
    if load.ttft_s is not None and load.ttft_s > 0:
        if entry.engine_ttft_means is None:
            entry.engine_ttft_means = deque(maxlen=PEAK_WINDOW_SCRAPES)
        entry.engine_ttft_means.append(load.ttft_s)
        entry.engine_ttft_floor = min(entry.engine_ttft_means)


def _reply_length(entry: _Backend, load: BackendLoad) -> float | None:
    """The mean length of the replies that finished in the interval: the engine's per-request
    histogram where it has one; else tokens generated since the last interval in which any
    request finished, ÷ those finished. Dividing one interval's tokens alone undercounts long
    replies by the intervals they ran without finishing (1,000-token replies over 0.25 s
    scrapes read as ~500, and the KV they were admitted on did not exist)."""
    if load.reply_tokens is not None:
        return load.reply_tokens
    finished, rate = load.requests_finished_per_s, load.generation_tokens_per_s
    if rate is None or load.interval_s is None:
        entry.unfinished_tokens = 0.0  # no baseline (a restarted engine): start counting anew
        return None
    entry.unfinished_tokens += rate * load.interval_s
    if not finished or finished <= 0:
        return None
    sample = entry.unfinished_tokens / (finished * load.interval_s)
    entry.unfinished_tokens = 0.0
    return sample


def claim_generation_tokens(interval_means: deque[float] | list[float], mean: float) -> float:
    """The reply length a request's KV claim assumes: the 90th percentile of recent
    per-interval mean lengths, never below the smoothed mean."""
    high = percentile(interval_means, GENERATION_CLAIM_QUANTILE)
    return mean if high is None else max(mean, high)


def _peak(samples: deque[float] | None) -> float | None:
    if not samples:
        return None
    best = max(samples)
    return best if best > 0 else None

