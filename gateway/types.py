"""Frozen value types shared across the gateway's packages.

Siblings (classify, policy, budget, providers, audit, scraper) never import each other; what
they exchange is defined here, so each can be tested with plain values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

# The client's JSON body. It travels through the gateway untouched (fields we do not route on
# reach the backend as sent); only providers read or rewrite it.
Payload = dict[str, Any]


class Endpoint(StrEnum):
    CHAT = "chat/completions"
    COMPLETIONS = "completions"
    EMBEDDINGS = "embeddings"
    # Only ever dispatched, never routed on: a Responses request is classified as chat and
    # sent as a Responses request to backends that serve /v1/responses natively.
    RESPONSES = "responses"


class Zone(StrEnum):
    SELF_HOSTED = "self_hosted"
    EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class TenantContext:
    """Who is calling: resolved from the API key once per request (cached)."""

    tenant_id: str
    tenant_name: str
    key_id: str
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class RouteRequest:
    """The fields the gateway routes on, plus the untouched payload."""

    request_id: str
    endpoint: Endpoint
    model: str
    payload: Payload
    stream: bool = False
    include_usage: bool = False
    max_output_tokens: int | None = None
    tags: tuple[str, ...] = ()
    session_id: str | None = None  # x-session-id: keeps a conversation on one replica
    # A Responses API request as such (conversation folded into `input`): what a backend
    # that serves /v1/responses natively is sent instead of `payload`, its chat translation.
    responses_payload: Payload | None = None
    # (parameter, why): what in it chat completions cannot carry, so only such a backend
    # may serve it (the others refuse it, naming the parameter and themselves).
    responses_only: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class TenantDetector:
    """A tenant's own sensitivity detector from the policy: a regular expression or a list of
    keywords, flagged as `custom.<name>` in `category` (which rules can match on). With
    `allow`, the opposite: values declared public (`words` exact, `regex` in full), and a
    finding whose whole text is one of them is dropped."""

    name: str
    category: str
    regex: str | None = None
    words: tuple[str, ...] = ()
    allow: bool = False


@dataclass(frozen=True, slots=True)
class SensitiveSpan:
    """Where a detector found sensitive data. Offsets only: the value itself is never kept."""

    type: str  # e.g. "email", "payment_card", "secret.aws_access_key"
    category: str  # "pii", "secret", "phi", or a tenant-defined category
    start: int
    end: int
    confidence: float
    # A reserved or published stand-in (an example.com address, a test card, AWS's EXAMPLE
    # key): identifies nobody, so routing ignores it, but redaction masks it all the same.
    reserved: bool = False


@dataclass(frozen=True, slots=True)
class Complexity:
    """Probability that a cheap model fails where a strong one succeeds, and its class."""

    p_strong: float
    label: str  # "low" | "medium" | "high"


# The task-type taxonomy, fixed: policies match on these names and reports group by them.
# knowledge = factual, STEM or humanities questions; chat = small talk.
TASK_TYPES = (
    "code", "math", "reasoning", "extraction", "summarization", "writing", "roleplay",
    "knowledge", "translation", "chat", "other",
)


@dataclass(frozen=True, slots=True)
class Task:
    """What kind of work a request asks for (one of TASK_TYPES) and the model's confidence."""

    type: str
    p: float


@dataclass(frozen=True, slots=True)
class Profile:
    """What classification learned about a request."""

    prompt_tokens: int
    max_output_tokens: int | None
    complexity: Complexity | None = None
    sensitivity: tuple[str, ...] = ()  # categories found, sorted, e.g. ("pii", "secret")
    spans: tuple[SensitiveSpan, ...] = ()
    # Found but not routed on, so only redaction uses them (kept out of `spans` and
    # `sensitivity` above): stand-ins, and findings below the policy's min_confidence.
    reserved_spans: tuple[SensitiveSpan, ...] = ()
    # False when prompt_tokens is an estimate: exactness could not have changed the route.
    prompt_tokens_exact: bool = True
    prompt_tokens_max: int | None = None  # a proven upper bound on the true count
    # Same key, same replica (bounded by load): the session id, else a hash of the prompt's
    # first characters, which is what a replica's prefix cache can reuse.
    affinity_key: bytes | None = None
    # Exact counts besides o200k (prompt_tokens itself): in another encoding a backend of
    # the pool uses ("cl100k_base"), or an engine's own ("engine:<backend>", from vLLM's
    # /tokenize), as (key, tokens).
    prompt_tokens_by_encoding: tuple[tuple[str, int], ...] = ()
    task: Task | None = None  # what kind of work is asked (TASK_TYPES)


@dataclass(frozen=True, slots=True)
class PricePerMTok:
    """USD per million tokens; cached input (read from a prompt cache) and cache writes
    (input written into one, which Anthropic charges extra for) default to the input price
    when unknown."""

    input_usd: float
    output_usd: float
    cached_input_usd: float | None = None
    cache_write_input_usd: float | None = None

    def cost_micro_usd(self, prompt: int, completion: int, cached: int = 0,
                       written: int = 0) -> int:
        """Integer micro-USD. A price per million tokens is exactly micro-USD per token.
        `prompt` counts every input token, the `cached` and `written` ones included."""
        if not cached and not written:  # the common case, priced on every routing decision
            return round(prompt * self.input_usd + completion * self.output_usd)
        cached = min(cached, prompt)
        written = min(written, prompt - cached)
        cached_price = self.input_usd if self.cached_input_usd is None else self.cached_input_usd
        write_price = (self.input_usd if self.cache_write_input_usd is None
                       else self.cache_write_input_usd)
        fresh = prompt - cached - written
        return round(
            fresh * self.input_usd + cached * cached_price + written * write_price
            + completion * self.output_usd
        )


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """A backend's provider-specific settings, compiled from the policy. Each provider kind
    (gateway/provider_kinds) subclasses it with its own frozen fields; together they are the
    tagged union `Backend.options`, its tag the backend's `provider`."""


NO_OPTIONS = ProviderOptions()


@dataclass(frozen=True, slots=True)
class Backend:
    """One upstream deployment, compiled from the policy."""

    name: str
    provider: str
    base_url: str
    model: str
    zone: str
    context_window: int
    quality_tier: int
    price: PricePerMTok | None = None
    api_key_env: str | None = None
    # Or the key read from a file when the policy was loaded (api_key_file): never printed.
    api_key_file: str | None = None
    api_key: str | None = field(default=None, repr=False)
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 300.0
    max_connections: int = 512
    # How the key is sent: "api_key" in the provider's own header, or "bearer".
    auth: str = "bearer"
    # What only this backend's provider kind has (Azure's deployment, Anthropic's version
    # header...): one of the kinds' option types in gateway/provider_kinds, tagged by
    # `provider`. The base instance means "the kind's defaults" (a Backend built by hand).
    options: ProviderOptions = NO_OPTIONS
    # `gen_ai.provider.name` in traces: the kind's telemetry name, compiled in ("" = provider).
    telemetry_name: str = ""
    # Latency priors until measurements exist (the policy's `latency:` or zone defaults).
    ttft_s: float = 0.2
    tpot_s: float = 0.02
    # Engine facts for self-hosted backends (None: learned from telemetry, or unknown).
    metrics_url: str | None = None  # scraped when set
    kv_bytes_per_token: float | None = None  # from the policy's KV geometry
    max_num_seqs: int | None = None  # batch slots: more concurrent requests queue
    prefill_tokens_per_s: float | None = None  # prior until the rate is measured
    gpu_hourly_usd: float | None = None  # every GPU of the deployment, per hour
    gpu_count: int | None = None  # GPUs in the deployment (tokens per GPU-hour)
    gpu_type: str | None = None  # the policy's name for the GPU (capacity planning)
    dcgm_url: str | None = None  # a DCGM exporter for its GPUs: utilisation, memory used
    # How the backend's own tokenizer is counted (policy `tokens:`): exactly in an OpenAI
    # encoding, or (None) estimated as the o200k count times `token_ratio`, a margin included.
    token_encoding: str | None = "o200k_base"
    token_ratio: float = 1.0
    # Estimated backends may be asked for their exact count at this URL (vLLM /tokenize,
    # Anthropic count_tokens) when the estimate says a prompt does not fit.
    tokenize_url: str | None = None
    # Serves OpenAI's Responses API (/v1/responses) itself: Responses requests pass through
    # rather than being translated to chat completions (policy `responses_api`).
    responses_native: bool = False


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


@dataclass(frozen=True, slots=True)
class Rejection:
    backend: str
    reason: str


@dataclass(frozen=True, slots=True)
class PredictionNote:
    """How the chosen backend's TTFT was predicted: by the learned model ("learned") or the
    policy's prior ("prior"), from which inputs."""

    source: str
    ttft_s: float
    wait_s: float  # the part of it due to load
    prefill_tokens_ahead: int
    requests_ahead: int
    running: int
    samples: int  # measurements the learned model rests on (0: prior only)
    calibration: float = 1.0  # the learned model's recent median measured ÷ predicted factor


@dataclass(frozen=True, slots=True)
class RouteDecision:
    primary: Backend
    fallbacks: tuple[Backend, ...]
    rule: str
    rejected: tuple[Rejection, ...] = ()
    predicted_cost_micro_usd: int = 0
    predicted_ttft_s: float = 0.0
    predicted_total_s: float = 0.0
    objective: str | None = None
    redact: bool = False  # replace sensitive spans before the request leaves self_hosted
    predicted_tpot_s: float = 0.0
    spilled: bool = False  # every regular candidate was saturated: served by a spill_to backend
    affinity: str | None = None  # "session" | "prefix" when affinity picked the replica
    prediction: PredictionNote | None = None  # how the primary's TTFT was predicted
    # Why the rule's latency target could not be promised: every candidate was predicted
    # over it (the request went to the one predicted fastest); None when met or no target.
    slo_miss: str | None = None

    @property
    def candidates(self) -> tuple[Backend, ...]:
        return (self.primary, *self.fallbacks)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0  # of prompt_tokens, written into the backend's prompt cache

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One row per request; never raw prompts, never secrets."""

    request_id: str
    ts_unix_s: float
    tenant_id: str
    key_id: str
    endpoint: str
    requested_model: str
    backend: str | None
    upstream_model: str | None
    rule: str | None
    status: int
    error_type: str | None
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_micro_usd: int
    duration_s: float
    ttft_s: float | None
    attempts: int
    stream: bool
    outcome: str
    rejected: tuple[Rejection, ...] = ()
    # What the router expected, beside what was then measured (ttft_s above).
    predicted_ttft_s: float | None = None
    predicted_cost_micro_usd: int | None = None
    spill_over: bool = False
    affinity: str | None = None
    unmetered: bool = False  # served while the budget store was down (fail open)
    # Who, in words, and what classification found (categories and detector types, never
    # values); with max_output_tokens, tags and over_soft_limit these are what decide()
    # needs to re-decide the request under another policy (policy replay).
    tenant_name: str = ""
    zone: str | None = None
    complexity: str | None = None
    p_strong: float | None = None
    task: str | None = None  # one of TASK_TYPES
    sensitivity: tuple[str, ...] = ()
    sensitive_types: tuple[str, ...] = ()
    redacted: bool = False  # spans were replaced before the request left self_hosted
    max_output_tokens: int | None = None
    tags: tuple[str, ...] = ()
    over_soft_limit: bool = False
    prompt_tokens_exact: bool = True
    # What the policy's baseline model (typically the frontier API) would have charged for
    # the same tokens: the "always the frontier model" comparison in savings reports.
    baseline_cost_micro_usd: int | None = None
    tried: tuple[str, ...] = ()  # backends attempted, in order (fallbacks after the first)
    telemetry: TelemetryNote | None = None  # the chosen backend as the router saw it
    slo_miss: str | None = None  # RouteDecision.slo_miss: why the TTFT target was not promised
    # Prompt and answer with sensitive spans already replaced: only for tenants that opted in
    # (store_content: redacted). Kept beside the row, outside its hash.
    content: AuditContent | None = None


@dataclass(frozen=True, slots=True)
class AuditContent:
    prompt: str
    response: str


@dataclass(frozen=True, slots=True)
class TelemetryNote:
    """The chosen backend's load when the request was routed, kept in its audit row."""

    running: int | None = None
    waiting: int | None = None
    kv_usage: float | None = None
    prefix_hit_rate: float | None = None
    in_flight: int = 0
    age_s: float | None = None  # how old the scrape was
    prediction: PredictionNote | None = None  # how its TTFT was predicted


# ---- budgets and rate limits, compiled from the policy at load (budget/ enforces them) ----


def check_scope(scope: str) -> None:
    if scope != "tenant" and not (
        scope.startswith(("key:", "tag:")) and len(scope) > 4
    ):
        raise ValueError(f"scope must be 'tenant', 'key:<id>' or 'tag:<tag>', not {scope!r}")


def _check_optional(name: str, value: int | None, minimum: int) -> None:
    if value is not None and (isinstance(value, bool) or value < minimum):
        raise ValueError(f"{name} must be None (unlimited) or an int >= {minimum}, not {value}")


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Spend caps per UTC day and month; None is unlimited. 0 refuses everything."""

    daily_micro_usd: int | None = None
    monthly_micro_usd: int | None = None
    daily_tokens: int | None = None
    monthly_tokens: int | None = None
    soft_fraction: float = 0.8

    def __post_init__(self) -> None:
        _check_optional("daily_micro_usd", self.daily_micro_usd, 0)
        _check_optional("monthly_micro_usd", self.monthly_micro_usd, 0)
        _check_optional("daily_tokens", self.daily_tokens, 0)
        _check_optional("monthly_tokens", self.monthly_tokens, 0)
        if not 0.0 < self.soft_fraction <= 1.0:
            raise ValueError(f"soft_fraction must be in (0, 1], not {self.soft_fraction}")


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Requests and tokens per minute (token buckets) and requests in flight; None is
    unlimited. A limit of 0 is refused: it would be a disabled key, not a rate."""

    rpm: int | None = None
    tpm: int | None = None
    concurrent: int | None = None

    def __post_init__(self) -> None:
        _check_optional("rpm", self.rpm, 1)
        _check_optional("tpm", self.tpm, 1)
        _check_optional("concurrent", self.concurrent, 1)


@dataclass(frozen=True, slots=True)
class ScopeLimits:
    """The limits of one scope of a tenant: "tenant", "key:<key_id>" or "tag:<tag>"."""

    scope: str
    budget: BudgetLimits | None = None
    rate: RateLimits | None = None

    def __post_init__(self) -> None:
        check_scope(self.scope)
