"""Frozen value types shared across the gateway's packages: requests, profiles, backends,
decisions and audit rows here; the fleet's load in fleet.py, budgets and limits in limits.py,
why a decision set a candidate aside in rejection.py, a backend's engine facts in engine.py.

Siblings (classify, policy, budget, audit, scraper...) never import each other; what they
exchange is defined here, so each can be tested with plain values. The built-in provider
kinds' compiled options are provider_options.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# The package's two other families, reached as `gateway.types` like everything here.
from gateway.types.engine import EngineFacts as EngineFacts
from gateway.types.fleet import KV_OUTPUT_TOKENS_UNSET as KV_OUTPUT_TOKENS_UNSET
from gateway.types.fleet import BackendLoad as BackendLoad
from gateway.types.fleet import BackendState as BackendState
from gateway.types.fleet import Circuit as Circuit
from gateway.types.fleet import FleetSnapshot as FleetSnapshot
from gateway.types.fleet import TtftInputs as TtftInputs
from gateway.types.fleet import TtftModel as TtftModel
from gateway.types.fleet import kv_claim_tokens as kv_claim_tokens
from gateway.types.limits import BudgetLimits as BudgetLimits
from gateway.types.limits import BudgetState as BudgetState
from gateway.types.limits import RateLimits as RateLimits
from gateway.types.limits import ScopeLimits as ScopeLimits
from gateway.types.limits import check_scope as check_scope
from gateway.types.rejection import Rejection as Rejection
from gateway.types.rejection import RejectionKind as RejectionKind
from gateway.types.wire import WireForms as WireForms

# The client's JSON body. It travels through the gateway untouched (fields we do not route on
# reach the backend as sent); only providers read or rewrite it.
Payload = dict[str, Any]


class Endpoint(StrEnum):
    """A wire API: what a request is routed as, what a payload speaks and what a backend
    serves."""

    CHAT = "chat/completions"
    COMPLETIONS = "completions"
    EMBEDDINGS = "embeddings"
    # Only ever dispatched, never routed on: a Responses request is classified as chat and
    # sent as a Responses request to backends that serve /v1/responses natively.
    RESPONSES = "responses"
    # Only ever dispatched: Anthropic's Messages API, what its backends are sent.
    MESSAGES = "messages"


# What requests are routed as (the others are only dispatched).
ROUTED_ENDPOINTS = (Endpoint.CHAT, Endpoint.COMPLETIONS, Endpoint.EMBEDDINGS)
# What an OpenAI-compatible server serves: a Backend built without saying otherwise.
OPENAI_APIS = frozenset({Endpoint.CHAT, Endpoint.COMPLETIONS, Endpoint.EMBEDDINGS})


class EntryPoint(StrEnum):
    """The API the client called, as the audit log keeps it: /v1/messages and /v1/responses
    are routed as chat, so `Endpoint` alone cannot tell them apart."""

    CHAT = "chat"
    COMPLETIONS = "completions"
    EMBEDDINGS = "embeddings"
    MESSAGES = "messages"
    RESPONSES = "responses"


# The entry point of a request whose front door did not name one: its routed endpoint's.
ENTRY_OF_ENDPOINT = {
    Endpoint.CHAT: EntryPoint.CHAT, Endpoint.COMPLETIONS: EntryPoint.COMPLETIONS,
    Endpoint.EMBEDDINGS: EntryPoint.EMBEDDINGS, Endpoint.RESPONSES: EntryPoint.RESPONSES,
    Endpoint.MESSAGES: EntryPoint.MESSAGES,
}


class Zone(StrEnum):
    SELF_HOSTED = "self_hosted"
    EXTERNAL = "external"


class AuthScheme(StrEnum):
    """How a backend's key is sent (policy `auth`, same spellings)."""

    API_KEY = "api_key"  # in the provider kind's own header (Azure's api-key, Anthropic's)
    BEARER = "bearer"


class AffinityKind(StrEnum):
    """What an affinity key keeps on one replica: a client's session (x-session-id) or a
    prompt prefix other requests share. The spelling is the x-gateway-affinity header's."""

    SESSION = "session"
    PREFIX = "prefix"


@dataclass(frozen=True, slots=True)
class TenantContext:
    """Who is calling: resolved from the API key once per request (cached)."""

    tenant_id: str
    tenant_name: str
    key_id: str
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class RouteRequest:
    """The fields the gateway routes on, plus the untouched payload (in `endpoint`'s API)."""

    request_id: str
    endpoint: Endpoint
    model: str
    payload: Payload
    stream: bool = False
    include_usage: bool = False
    max_output_tokens: int | None = None
    tags: tuple[str, ...] = ()
    session_id: str | None = None  # x-session-id: keeps a conversation on one replica
    # The front door it came through when that is not its endpoint's (messages, responses).
    entry: EntryPoint | None = None
    # The client's own body and what the payload could not carry, where its front door
    # speaks another API (messages, responses); only gateway/translate reads it.
    forms: WireForms | None = None


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
    # 0: scored on the last user message; n: on the user message n turns before it, which
    # scored higher (a follow-up in a hard conversation).
    turns_back: int = 0


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
    affinity_kind: AffinityKind = AffinityKind.PREFIX  # what affinity_key keys
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
    subclasses it with its own frozen fields (the built-in kinds' in provider_options.py);
    together they are the tagged union `Backend.options`, its tag the backend's `provider`."""


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
    # None: the gateway's settings (GATEWAY_UPSTREAM_READ_TIMEOUT_S, _MAX_CONNECTIONS); the
    # connect timeout is the gateway's alone (GATEWAY_UPSTREAM_CONNECT_TIMEOUT_S).
    read_timeout_s: float | None = None
    max_connections: int | None = None
    auth: AuthScheme = AuthScheme.BEARER
    # What only this backend's provider kind has (Azure's deployment, Anthropic's version
    # header...): one of the kinds' option types (types/provider_options.py), tagged by
    # `provider`. The base instance means "the kind's defaults" (a Backend built by hand).
    options: ProviderOptions = NO_OPTIONS
    # `gen_ai.provider.name` in traces: the kind's telemetry name, compiled in ("" = provider).
    telemetry_name: str = ""
    # Latency priors until measurements exist (the policy's `latency:` or zone defaults).
    ttft_s: float = 0.2
    tpot_s: float = 0.02
    # What is declared of a self-hosted engine behind it (None: nothing; an external API).
    engine: EngineFacts | None = None
    # How the backend's own tokenizer is counted (policy `tokens:`): exactly in an OpenAI
    # encoding, or (None) estimated as the o200k count times `token_ratio`, a margin included.
    token_encoding: str | None = "o200k_base"
    token_ratio: float = 1.0
    # Estimated backends may be asked for their exact count at this URL (vLLM /tokenize,
    # Anthropic count_tokens) when the estimate says a prompt does not fit.
    tokenize_url: str | None = None
    # The wire APIs its provider is sent requests in: its kind's, and /v1/responses where
    # the policy's `responses_api` is native (Responses requests then pass through rather
    # than being translated to chat completions). gateway/translate/wire.py picks from it.
    serves: frozenset[Endpoint] = OPENAI_APIS
    # Takes OpenAI's `reasoning_effort` (vLLM for any model; OpenAI and Azure for their
    # reasoning models): where a Claude client's extended thinking becomes an effort.
    takes_reasoning_effort: bool = True
    # Sensitivity categories this external backend is approved to receive unredacted, and
    # the approval's reference (policy `approved_for`, `approval`).
    approved_for: frozenset[str] = frozenset()
    approval: str | None = None

    def approval_used(self, sensitivity: tuple[str, ...], redacted: bool) -> str | None:
        """The approval a request with these findings relied on here: it left self_hosted
        unredacted, and every category it carried is one this backend is approved for."""
        if (not sensitivity or redacted or self.approval is None
                or self.zone == Zone.SELF_HOSTED):
            return None
        return self.approval if self.approved_for.issuperset(sensitivity) else None


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
    affinity: AffinityKind | None = None  # when affinity picked the replica
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
    task_p: float | None = None  # the task-type model's probability for `task`
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
    # Why each failed attempt failed, in order: "backend: HTTP 503" or the transport failure's
    # kind ("backend: ServerDisconnectedError"); never an upstream's error text.
    failures: tuple[str, ...] = ()
    telemetry: TelemetryNote | None = None  # the chosen backend as the router saw it
    slo_miss: str | None = None  # RouteDecision.slo_miss: why the TTFT target was not promised
    # The approval (policy `approval`) that let this request's sensitive data reach an
    # external backend unredacted; None when none was needed.
    approval: str | None = None
    entry_point: str | None = None  # EntryPoint: the API the client called
    # The backends the decision set aside for their load then (policy/load_state.py): what a
    # replay puts back so the recorded policy reproduces its own decisions.
    load_rejected: tuple[str, ...] = ()
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
