"""The `rules:` part of the policy schema: conditions (`when`) and actions, as operators write them.

Rules are evaluated in order and the first whose every condition holds decides the route.
A condition left out matches everything; a list matches any of its items.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

COMPLEXITY_CLASSES = ("low", "medium", "high")
Endpoint = Literal["chat/completions", "completions", "embeddings", "messages"]
TaskType = Literal[
    "code", "math", "reasoning", "extraction", "summarization", "writing", "roleplay",
    "knowledge", "translation", "chat", "other",
]
# Spelled out for the JSON schema; a unit test holds it equal to gateway.types.TASK_TYPES.


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Range(Strict):
    """A numeric interval; every bound given must hold."""

    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> Range:
        if self.gt is None and self.gte is None and self.lt is None and self.lte is None:
            raise ValueError("give at least one of gt, gte, lt, lte")
        return self


class When(Strict):
    tenant: list[str] | None = None
    model: list[str] | None = Field(default=None, description="the model name the client sent")
    sensitivity: list[str] | None = Field(
        default=None,
        description="matches when any of these categories was found; 'none' matches a "
        "request where nothing was found",
    )
    complexity: list[Literal["low", "medium", "high"]] | None = None
    p_strong: Range | None = Field(default=None, description="complexity probability")
    task: list[TaskType] | None = Field(
        default=None, description="the request's task type (the classifier's most likely)")
    task_p: Range | None = Field(
        default=None,
        description="the task-type model's probability for the type it chose; beside `task`, "
        "a rule can act on a type only where the model is that sure (about one prompt in three "
        "gets the wrong type, most of them with a low probability)",
    )
    prompt_tokens: Range | None = None
    max_output_tokens: Range | None = None
    tags: list[str] | None = Field(default=None, description="any of the x-gateway-tags")
    endpoint: list[Endpoint] | None = None
    budget: list[Literal["ok", "soft_limit"]] | None = Field(
        default=None,
        description="soft_limit: the tenant (or key, or tag) has spent past its budget's "
        "soft limit; use it to downgrade to cheaper backends before the hard stop",
    )

    def is_catch_all(self) -> bool:
        return all(getattr(self, name) is None for name in type(self).model_fields)


class Weights(Strict):
    cost: float = Field(default=0.0, ge=0)
    latency: float = Field(default=0.0, ge=0)
    quality: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _not_all_zero(self) -> Weights:
        if self.cost + self.latency + self.quality <= 0:
            raise ValueError("at least one weight must be positive")
        return self


class Slo(Strict):
    ttft_ms: float | None = Field(default=None, gt=0)
    tpot_ms: float | None = Field(default=None, gt=0, description="time per output token")


class RuleSpec(Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    when: When = Field(default_factory=When)
    deny: str | None = Field(default=None, description="refuse with this message (403)")
    backends: list[str] | None = Field(
        default=None, description="serve from these backends instead of the model's pool"
    )
    allow_zones: list[str] | None = None
    allow_backends: list[str] | None = None
    prefer: list[str] | None = Field(default=None, description="try these first, in order")
    objective: Literal["cheapest", "fastest", "balanced"] | Weights | None = None
    min_quality_tier: int | dict[Literal["low", "medium", "high"], int] | None = None
    slo: Slo | None = None
    redact: bool = Field(
        default=False,
        description="replace sensitive spans with placeholders before the request leaves "
        "the self_hosted zone, and restore them in the response",
    )
    fallbacks: list[str] | None = Field(
        default=None, description="tried, in order, after every candidate of the rule failed"
    )
    max_fallbacks: int | None = Field(default=None, ge=0)
    spill_to: list[str] | None = Field(
        default=None,
        description="backends (typically an external API) used only while every candidate "
        "is saturated or predicted to miss the SLO; zone and context limits still apply, so "
        "data kept at home never spills",
    )

    @model_validator(mode="after")
    def _deny_is_exclusive(self) -> RuleSpec:
        if self.deny is not None:
            others = {"backends", "allow_zones", "allow_backends", "prefer", "objective",
                      "min_quality_tier", "slo", "fallbacks", "spill_to"}
            given = sorted(f for f in others if getattr(self, f) is not None)
            if given:
                raise ValueError(f"a deny rule takes no routing actions (got {', '.join(given)})")
        return self

    def backend_references(self) -> list[tuple[str, str]]:
        """(field, backend name) for every backend the rule names."""
        out = []
        for field in ("backends", "allow_backends", "prefer", "fallbacks", "spill_to"):
            out += [(field, name) for name in getattr(self, field) or ()]
        return out
