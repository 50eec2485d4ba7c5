"""THE policy file schema (pydantic, unknown keys rejected); `policies/schema.json` is generated.

This is what operators write. The loader compiles it into the runtime form (`PolicySet`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    GetJsonSchemaHandler,
    HttpUrl,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from gateway.policy.backend_kinds import complete_json_schema, validate_backend
from gateway.policy.rule_schema import RuleSpec, Strict
from gateway.policy.sensitivity_schema import (
    ALLOW_DESCRIPTION,
    AllowedValuesSpec,
    SensitivitySpec,
    TenantDetectorSpec,
)
from gateway.policy.shadow_schema import ShadowSpec
from gateway.provider_kinds.kind import OptionsSpec

# At most 64 characters: backend names are stored whole in every audit row and rollup.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$"


class PriceSpec(Strict):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")
    cached_input: float | None = Field(default=None, ge=0)
    cache_write_input: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens written into the prompt cache (Anthropic "
        "charges 1.25x input for 5-minute writes); default: the input price",
    )


class GpuSpec(Strict):
    type: str
    count: int = Field(default=1, ge=1)
    hourly_usd: float = Field(ge=0, description="cost of one GPU per hour")
    est_tokens_per_s: float = Field(
        default=1000.0, gt=0,
        description="expected throughput (prompt + output tokens per second) across the "
        "deployment; prices self-hosted tokens until throughput is measured",
    )


class KvSpec(Strict):
    """KV-cache geometry: bytes per token = 2 (K and V) × layers × kv_heads × head_dim × bytes."""

    layers: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    dtype_bytes: float = Field(default=2, gt=0)


class LatencySpec(Strict):
    """Priors for routing until the gateway has measured the backend."""

    ttft_ms: float = Field(gt=0)
    tpot_ms: float = Field(gt=0, description="time per output token")
    prefill_tokens_per_s: float | None = Field(
        default=None, gt=0,
        description="self-hosted: prompt tokens the engine prefills per second (used to "
        "predict TTFT until measured from its metrics)",
    )


class SimulatorSpec(Strict):
    """Demo only: `gateway serve` starts a simulated server on base_url's port, playing the
    backend's provider (vLLM, OpenAI's API or Anthropic's)."""

    max_model_len: int | None = Field(default=None, ge=256,
                                      description="default: the backend's context_window")
    num_gpu_blocks: int | None = Field(
        default=None, ge=16, description="KV cache in 16-token blocks (default 2048 for a "
        "vLLM; room for four full contexts for an API)")
    max_num_seqs: int | None = Field(
        default=None, ge=1, description="batch slots; prefer the backend's own max_num_seqs, "
        "which the router reads too")
    decode_step_base_s: float | None = Field(default=None, ge=0)
    prefill_tokens_per_s: float | None = Field(default=None, gt=0)
    response_delay_s: float | None = Field(
        default=None, ge=0, le=10, description="a fixed wait before generation starts: a "
        "commercial API's network and queueing time")


class TokensSpec(Strict):
    """How prompts are counted against this backend's context window and prices."""

    count: Literal["o200k_base", "cl100k_base", "estimate", "tokenize"] = Field(
        description="o200k_base / cl100k_base: exact, in the OpenAI encoding the model uses; "
        "estimate: the o200k count times `ratio`, for tokenizers the gateway does not ship "
        "(open-weight models, Anthropic); tokenize (vllm, anthropic): the estimate, and the "
        "backend's own count (vLLM /tokenize, Anthropic count_tokens) when the estimate says "
        "the prompt does not fit",
    )
    ratio: float | None = Field(
        default=None, ge=0.5, le=8,
        description="estimate: the backend's tokens per o200k token, safety margin included "
        "(default 1.25; other languages can need far more)",
    )

    @model_validator(mode="after")
    def _ratio_only_for_estimates(self) -> TokensSpec:
        if self.ratio is not None and self.count not in ("estimate", "tokenize"):
            raise ValueError("ratio applies to count: estimate or tokenize only")
        return self


class BackendSpec(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    provider: str = Field(
        description="the provider kind (vllm, openai, openai_compat, azure, anthropic, or one "
        "registered in gateway/provider_kinds): which keys below apply, and how the backend "
        "is called, counted and traced")
    base_url: HttpUrl
    model: str = Field(min_length=1, description="model name the upstream expects")
    zone: str = Field(default="self_hosted", pattern=r"^[a-z][a-z0-9_]*$")
    context_window: int = Field(ge=1)
    quality_tier: int = Field(default=1, ge=0, le=10)
    price_per_mtok_usd: PriceSpec | None = None
    gpu: GpuSpec | None = None
    api_key_env: str | None = Field(
        default=None,
        pattern=r"^[A-Z_][A-Z0-9_]*$",
        description="name of the environment variable holding the key (never the key)",
    )
    api_key_file: str | None = Field(
        default=None, pattern=r"^/\S+$",
        description="absolute path of a file holding the key (a Docker or Kubernetes secret); "
        "re-read when it changes. Instead of api_key_env, never with it",
    )
    auth: Literal["api_key", "bearer"] | None = Field(
        default=None,
        description="how the key is sent: api_key (Azure `api-key`, Anthropic `x-api-key`; "
        "their default) or bearer (`Authorization: Bearer`: the default elsewhere, and for "
        "Entra ID or OAuth tokens)",
    )
    responses_api: Literal["native", "translate"] | None = Field(
        default=None,
        description="how Responses API requests reach this backend: native (passed through "
        "to its /v1/responses; the default for openai and azure, and for a vllm server that "
        "serves it) or translate (to chat completions; the default elsewhere)",
    )
    kv: KvSpec | None = None
    max_num_seqs: int | None = Field(
        default=None, ge=1,
        description="self-hosted: the engine's batch slots (vLLM --max-num-seqs); requests "
        "beyond it queue, which TTFT prediction accounts for",
    )
    latency: LatencySpec | None = None
    metrics_url: HttpUrl | None = Field(
        default=None, description="Prometheus /metrics (default for vllm: beside base_url)"
    )
    dcgm_url: HttpUrl | None = Field(
        default=None,
        description="self-hosted: an NVIDIA DCGM exporter's /metrics for this deployment's "
        "GPUs (every GPU it reports); GPU utilisation and memory used go into the economics "
        "report",
    )
    timeout_s: float | None = Field(
        default=None, gt=0,
        description="read timeout in seconds (default: the gateway's "
        "GATEWAY_UPSTREAM_READ_TIMEOUT_S, 300)",
    )
    max_connections: int | None = Field(
        default=None, ge=1,
        description="connections to this backend at once (default: the gateway's "
        "GATEWAY_UPSTREAM_MAX_CONNECTIONS, 512)",
    )
    tokens: TokensSpec | None = Field(
        default=None,
        description="how prompts are counted for this backend (default: exact in the "
        "OpenAI model's encoding for openai/azure, an estimate at 1.25x the o200k count for "
        "anthropic and self-hosted models)",
    )
    simulate: SimulatorSpec | None = None
    approved_for: list[Literal["pii", "secret", "phi"]] | None = Field(
        default=None, min_length=1,
        description="sensitivity categories this backend outside self_hosted is approved to "
        "receive unredacted (a BAA for phi, a DPA for pii): leak-path checks accept routes "
        "to it for these categories only; needs `approval`",
    )
    approval: str | None = Field(
        default=None, min_length=1, max_length=200,
        description="the approval's reference (a BAA or DPA id, a ticket): named in the audit "
        "row of every sensitive request it carried and by `policy explain`",
    )
    # The keys only this backend's kind accepts, validated by the kind's own schema (see
    # _kind_options): not a key of the YAML, which keeps every backend's keys flat.
    options: OptionsSpec = Field(default_factory=OptionsSpec, exclude=True)

    @model_validator(mode="wrap")
    @classmethod
    def _kind_options(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> BackendSpec:
        return validate_backend(cls, data, handler)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        complete_json_schema(handler.resolve_ref_schema(schema))
        return schema

    @field_validator("base_url")
    @classmethod
    def _no_credentials_in_url(cls, url: HttpUrl) -> HttpUrl:
        if url.username or url.password:
            raise ValueError(
                "credentials do not belong in base_url; use api_key_env or api_key_file")
        return url

    @model_validator(mode="after")
    def _keys_named_one_way(self) -> BackendSpec:
        if self.api_key_env is not None and self.api_key_file is not None:
            raise ValueError("api_key_env and api_key_file are both given: name the key one way")
        if (self.approved_for is None) != (self.approval is None):
            raise ValueError("approved_for and approval go together: the categories, and the "
                             "reference of the approval that covers them")
        if self.approved_for is not None and self.zone == "self_hosted":
            raise ValueError("approved_for is for backends outside self_hosted (sensitive data "
                             "may reach self_hosted ones anyway)")
        return self


class BudgetSpec(Strict):
    """Spend caps per UTC day and month (omitted: unlimited). Reaching `soft_limit` of any of
    them marks requests over budget for rules (`when: {budget: [soft_limit]}`) and adds a
    warning header; reaching the cap refuses requests with 429 insufficient_quota."""

    daily_usd: float | None = Field(default=None, ge=0)
    monthly_usd: float | None = Field(default=None, ge=0)
    daily_tokens: int | None = Field(default=None, ge=0)
    monthly_tokens: int | None = Field(default=None, ge=0)
    soft_limit: float = Field(default=0.8, gt=0, le=1, description="share of a cap")


class LimitsSpec(Strict):
    rpm: int | None = Field(default=None, ge=1, description="requests per minute")
    tpm: int | None = Field(
        default=None, ge=1,
        description="tokens per minute: prompt + max output at admission, corrected to the "
        "actual count when the request settles",
    )
    concurrent: int | None = Field(default=None, ge=1, description="requests in flight")


ROUTER_DESCRIPTION = (
    "a directory written by `gateway router fit` (its router.json), whose p_strong replaces "
    "the shipped complexity model's; reloaded with the policy"
)


class ScopeSpec(Strict):
    budget: BudgetSpec | None = None
    limits: LimitsSpec | None = None


class TenantSpec(Strict):
    """Per-tenant settings. Budgets and limits set through the admin API override these."""

    models: list[str] | None = Field(
        default=None, description="virtual models this tenant may use (default: all)"
    )
    budget: BudgetSpec | None = None
    limits: LimitsSpec | None = None
    per_key: ScopeSpec | None = Field(
        default=None, description="budget and limits every API key of the tenant gets"
    )
    tags: dict[str, ScopeSpec] = Field(
        default_factory=dict,
        description="budgets and limits per x-gateway-tags value (e.g. a team or feature)",
    )
    store_content: Literal["none", "redacted", "full"] = Field(
        default="none",
        description="keep prompts and responses with the audit record, sensitive spans "
        "replaced by typed placeholders (off by default: only metadata is recorded); "
        "`full` does that too and also keeps stored Responses API responses as sent, "
        "which previous_response_id needs",
    )
    responses_retention_hours: float | None = Field(
        default=None, gt=0,
        description="how long this tenant's stored Responses API responses can be continued "
        "and read (with store_content: full); default: GATEWAY_RESPONSES_RETENTION_DAYS",
    )
    detectors: list[TenantDetectorSpec] = Field(
        default_factory=list,
        description="the tenant's own sensitivity detectors (project code names, customer "
        "ids, internal hostnames), found beside the built-in ones on every request",
    )
    min_confidence: float | None = Field(
        default=None, ge=0, le=1,
        description="this tenant's own sensitivity.min_confidence (default: the policy's)",
    )
    allow: list[AllowedValuesSpec] = Field(
        default_factory=list,
        description="this tenant's own allowed values, beside sensitivity.allow; "
        + ALLOW_DESCRIPTION,
    )
    router: str | None = Field(
        default=None, description=ROUTER_DESCRIPTION + " for this tenant's requests (before "
        "the model group's)",
    )
    on_budget_store_error: Literal["fail_open", "fail_closed"] = Field(
        default="fail_open",
        description="when the budget store (Redis) cannot answer: fail_open serves the "
        "request unmetered (marked in the audit record and a metric); fail_closed refuses "
        "it with 503",
    )


class AffinitySpec(Strict):
    enabled: bool = True
    max_load_ratio: float = Field(
        default=1.5, ge=1.0,
        description="keep a prefix or session on its replica only while the wait its load "
        "adds (queue, prefill backlog) is at most this multiple of the least loaded "
        "replica's, plus 50 ms",
    )


class TelemetrySpec(Strict):
    """How live engine metrics are read and trusted."""

    scrape_interval_s: float = Field(default=1.0, gt=0, le=60)
    scrape_timeout_s: float = Field(default=0.5, gt=0, le=30)
    stale_after_s: float = Field(
        default=5.0, gt=0, description="metrics older than this are not trusted"
    )
    on_stale: Literal["avoid", "fail_closed"] = Field(
        default="avoid",
        description="avoid: try a backend with stale metrics only after the others; "
        "fail_closed: never send to it",
    )
    max_waiting: int = Field(
        default=0, ge=0,
        description="a self-hosted backend with more requests than this waiting in its "
        "engine queue counts as saturated",
    )
    affinity: AffinitySpec = Field(default_factory=AffinitySpec)


class ModelPoolSpec(Strict):
    backends: list[str] = Field(min_length=1)
    router: str | None = Field(
        default=None, description=ROUTER_DESCRIPTION + " for requests to this model group",
    )
    strategy: Literal["load_aware", "round_robin", "least_in_flight", "priority"] = Field(
        default="load_aware",
        description="load_aware (default) sends each request to the member with the most room "
        "by live engine metrics (KV, queue, prefill backlog) and keeps prefixes and sessions "
        "on their replica; round_robin takes turns among healthy members regardless of load; "
        "least_in_flight picks the member with the fewest gateway requests; priority tries "
        "them in the listed order (primary, then fallbacks)",
    )


class BaselineSpec(Strict):
    """A price to compare with, for a model the policy need not route to."""

    name: str = Field(min_length=1)
    price_per_mtok_usd: PriceSpec


class PolicyFile(Strict):
    version: Literal[1]
    backends: list[BackendSpec] = Field(min_length=1)
    models: dict[str, list[str] | ModelPoolSpec] = Field(
        default_factory=dict,
        description="virtual model names clients ask for → candidate backends (a list is a "
        "round-robin pool)",
    )
    rules: list[RuleSpec] = Field(
        default_factory=list, description="evaluated in order; the first match decides"
    )
    tenants: dict[str, TenantSpec] = Field(default_factory=dict)
    telemetry: TelemetrySpec = Field(default_factory=TelemetrySpec)
    sensitivity: SensitivitySpec = Field(default_factory=SensitivitySpec)
    baseline: str | BaselineSpec | None = Field(
        default=None,
        description="what every audit row's cost is compared with (the 'always the frontier "
        "model' baseline of savings reports): a backend's name, or a model and its price "
        "(no backend needed); default: the priced external backend with the highest output "
        "price",
    )
    shadow: ShadowSpec | None = Field(
        default=None,
        description="shadow judging: a sampled share of requests served by a cheaper backend "
        "is later sent to the strong backend too, and the judge scores both answers",
    )
