"""What one provider kind registers: its policy keys and how they compile, the factory that
builds its Provider, how its prompts are counted (estimated, or asked of the upstream), where
its engine is scraped, and its telemetry name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from gateway.types import NO_OPTIONS, OPENAI_APIS, Backend, Endpoint, Payload, ProviderOptions
from gateway.upstream import Provider


class OptionsSpec(BaseModel):
    """The policy keys only one kind accepts, written beside a backend's shared keys (unknown
    keys rejected, like the rest of the policy schema). A kind without keys of its own uses
    this class as is."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class UpstreamLimits:
    """The composition root's limits for every provider's connection pools."""

    connect_timeout_s: float = 5.0
    read_timeout_s: float = 300.0
    max_connections: int = 512


ProviderFactory = Callable[[UpstreamLimits], Provider]
# Whether the kind's upstreams serve OpenAI's Responses API themselves: "native" (by default;
# `responses_api: translate` opts out), "optional" (translated unless the policy says native),
# "never" (always translated; `responses_api: native` is refused).
ResponsesSupport = Literal["native", "optional", "never"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenCount:
    """How an upstream counts a prompt itself (`tokens: {count: tokenize}` in the policy):
    asked only when the estimate says a prompt does not fit (provider_kinds/engine_tokens.py).

    `url` maps the backend's base_url to the endpoint; `body` builds the request (None: this
    request cannot be counted there, and the estimate stands); `headers` are the request's
    (its key included); the answer is a JSON object holding the count under `answer_field`.
    """

    url: Callable[[str], str]
    body: Callable[[Backend, Endpoint, Payload], dict[str, object] | None]
    headers: Callable[[Backend, str], dict[str, str]]
    answer_field: str


def no_options(spec: OptionsSpec) -> ProviderOptions:
    return NO_OPTIONS


def no_problems(options: OptionsSpec, base_url: str) -> list[tuple[str | None, str]]:
    return []


def estimated(model: str) -> str | None:
    return None


def any_model(model: str) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderKind:
    """One provider kind: everything that differs between kinds, in one registration.

    `check` sees the kind's options with the backend's base_url, for rules that span both;
    it returns (key or None for the backend itself, message). `encoding` maps a model name
    to the OpenAI encoding the upstream counts in exactly, or None: estimated from the o200k
    count; `reasoning_effort` to whether the model takes OpenAI's `reasoning_effort`.
    `metrics_url` maps base_url to where the kind's engine publishes Prometheus metrics
    (scraped by default: `Backend.engine.metrics_url`); None where it has no engine of its
    own to watch.
    """

    name: str  # the policy's `provider:` value
    telemetry_name: str  # OpenTelemetry's `gen_ai.provider.name`
    factory: ProviderFactory  # builds the one Provider that serves every backend of the kind
    options: type[OptionsSpec] = OptionsSpec
    # Any: each kind's compile and check take its own `options` class.
    compile: Callable[[Any], ProviderOptions] = no_options
    check: Callable[[Any, str], list[tuple[str | None, str]]] = no_problems
    encoding: Callable[[str], str | None] = estimated
    # The API's own key header (Azure's `api-key`, Anthropic's `x-api-key`): keys go there by
    # default and `auth: api_key` is allowed. None: bearer tokens only.
    api_key_header: str | None = None
    token_count: TokenCount | None = None  # None: the upstream is never asked to count
    metrics_url: Callable[[str], str] | None = None
    responses: ResponsesSupport = "optional"
    # The wire APIs its Provider is sent requests in (gateway/translate/wire.py translates a
    # request into one of them); /v1/responses is added where `responses` makes it native.
    serves: frozenset[Endpoint] = OPENAI_APIS
    reasoning_effort: Callable[[str], bool] = any_model
    simulated_api: str | None = None  # what `gateway sim` plays for it ("vllm", "openai"...)
