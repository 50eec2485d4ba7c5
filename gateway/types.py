"""Frozen value types shared across the gateway's packages.

Siblings (classify, policy, budget, providers, audit, scraper) never import each other; what
they exchange is defined here, so each can be tested with plain values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# The client's JSON body. It travels through the gateway untouched (fields we do not route on
# reach the backend as sent); only providers read or rewrite it.
Payload = dict[str, Any]


class Endpoint(StrEnum):
    CHAT = "chat/completions"
    COMPLETIONS = "completions"
    EMBEDDINGS = "embeddings"


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


@dataclass(frozen=True, slots=True)
class SensitiveSpan:
    """Where a detector found sensitive data. Offsets only: the value itself is never kept."""

    type: str  # e.g. "email", "payment_card", "secret.aws_access_key"
    category: str  # "pii", "secret", "phi", or a tenant-defined category
    start: int
    end: int
    confidence: float


@dataclass(frozen=True, slots=True)
class Complexity:
    """Probability that a cheap model fails where a strong one succeeds, and its class."""

    p_strong: float
    label: str  # "low" | "medium" | "high"


@dataclass(frozen=True, slots=True)
class Profile:
    """What classification learned about a request."""

    prompt_tokens: int
    max_output_tokens: int | None
    complexity: Complexity | None = None
    sensitivity: tuple[str, ...] = ()  # categories found, sorted, e.g. ("pii", "secret")
    spans: tuple[SensitiveSpan, ...] = ()
    # False when prompt_tokens is an estimate: exactness could not have changed the route.
    prompt_tokens_exact: bool = True
    prompt_tokens_max: int | None = None  # a proven upper bound on the true count


@dataclass(frozen=True, slots=True)
class PricePerMTok:
    """USD per million tokens; cached input defaults to the input price when unknown."""

    input_usd: float
    output_usd: float
    cached_input_usd: float | None = None

    def cost_micro_usd(self, prompt: int, completion: int, cached: int = 0) -> int:
        """Integer micro-USD. A price per million tokens is exactly micro-USD per token."""
        if not cached:  # the common case, priced on every routing decision: keep it short
            return round(prompt * self.input_usd + completion * self.output_usd)
        cached = min(cached, prompt)
        cached_price = self.input_usd if self.cached_input_usd is None else self.cached_input_usd
        fresh = prompt - cached
        return round(
            fresh * self.input_usd + cached * cached_price + completion * self.output_usd
        )


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
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 300.0
    max_connections: int = 512
    # Provider-specific settings (see policy/schema.py): Azure's deployment URL and API
    # version, how the key is sent, Anthropic's version header and its required max_tokens,
    # which max-tokens field an OpenAI-family upstream accepts ("auto": by model family).
    api_version: str | None = None
    deployment: str | None = None
    auth: str = "bearer"  # "bearer" | "api_key"
    anthropic_version: str | None = None
    default_max_tokens: int | None = None
    max_tokens_field: str = "auto"  # "auto" | "max_tokens" | "max_completion_tokens"
    # Latency priors until measurements exist (the policy's `latency:` or zone defaults).
    ttft_s: float = 0.2
    tpot_s: float = 0.02


@dataclass(frozen=True, slots=True)
class BackendHealth:
    healthy: bool
    consecutive_failures: int = 0
    retry_at_s: float = 0.0


@dataclass(frozen=True, slots=True)
class BackendLatency:
    """Measured latency of a backend (replaces the policy's priors when present)."""

    ttft_s: float
    tpot_s: float


@dataclass(frozen=True, slots=True)
class FleetSnapshot:
    """Immutable view of the fleet taken once per request."""

    health: dict[str, BackendHealth] = field(default_factory=dict)
    latency: dict[str, BackendLatency] = field(default_factory=dict)
    taken_at_s: float = 0.0

    def is_healthy(self, backend: str) -> bool:
        entry = self.health.get(backend)
        return entry is None or entry.healthy


@dataclass(frozen=True, slots=True)
class Rejection:
    backend: str
    reason: str


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

    @property
    def candidates(self) -> tuple[Backend, ...]:
        return (self.primary, *self.fallbacks)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

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
