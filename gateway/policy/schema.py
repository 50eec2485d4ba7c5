"""THE policy file schema (pydantic, unknown keys rejected); `policies/schema.json` is generated.

This is what operators write. The loader compiles it into the runtime form (`PolicySet`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, field_validator, model_validator

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PriceSpec(Strict):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")
    cached_input: float | None = Field(default=None, ge=0)


class GpuSpec(Strict):
    type: str
    count: int = Field(default=1, ge=1)
    hourly_usd: float = Field(ge=0, description="cost of one GPU per hour")


class SimulatorSpec(Strict):
    """Demo only: `gateway serve` starts a simulated vLLM on base_url's port."""

    max_model_len: int | None = Field(default=None, ge=256)
    num_gpu_blocks: int | None = Field(default=None, ge=16)
    max_num_seqs: int | None = Field(default=None, ge=1)
    decode_step_base_s: float | None = Field(default=None, ge=0)
    prefill_tokens_per_s: float | None = Field(default=None, gt=0)


class BackendSpec(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    provider: Literal["vllm", "openai", "openai_compat"]
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
    timeout_s: float | None = Field(default=None, gt=0, description="read timeout")
    max_connections: int | None = Field(default=None, ge=1)
    simulate: SimulatorSpec | None = None

    @field_validator("base_url")
    @classmethod
    def _no_credentials_in_url(cls, url: HttpUrl) -> HttpUrl:
        if url.username or url.password:
            raise ValueError("credentials do not belong in base_url; use api_key_env")
        return url


class TenantSpec(Strict):
    """Per-tenant settings (budgets and limits arrive with the budget work)."""

    models: list[str] | None = Field(
        default=None, description="virtual models this tenant may use (default: all)"
    )


class ModelPoolSpec(Strict):
    backends: list[str] = Field(min_length=1)
    strategy: Literal["round_robin", "priority"] = Field(
        default="round_robin",
        description="round_robin spreads load over healthy members; priority always tries "
        "them in the listed order (primary, then fallbacks)",
    )


class PolicyFile(Strict):
    version: Literal[1]
    backends: list[BackendSpec] = Field(min_length=1)
    models: dict[str, list[str] | ModelPoolSpec] = Field(
        default_factory=dict,
        description="virtual model names clients ask for → candidate backends (a list is a "
        "round-robin pool)",
    )
    tenants: dict[str, TenantSpec] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _references_resolve(self) -> PolicyFile:
        names = [b.name for b in self.backends]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate backend names: {', '.join(dupes)}")
        known = set(names)
        for model, spec in self.models.items():
            pool = spec.backends if isinstance(spec, ModelPoolSpec) else spec
            if not pool:
                raise ValueError(f"models.{model}: the candidate list is empty")
            missing = [b for b in pool if b not in known]
            if missing:
                raise ValueError(f"models.{model}: undefined backends {', '.join(missing)}")
        for tenant, spec in self.tenants.items():
            for model in spec.models or []:
                if model not in self.models and model not in known:
                    raise ValueError(f"tenants.{tenant}.models: unknown model {model!r}")
        return self
