"""Span names and attributes for the request path, after OpenTelemetry's GenAI semantic
conventions (`gen_ai.*`, `server.*`, `error.type`) plus the gateway's own `gateway.*`.

Pure functions of the request path's values; called only when a request is traced.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from gateway.errors import GatewayError
from gateway.types import Backend, Endpoint, Profile, RouteDecision, RouteRequest, TenantContext
from gateway.types import Usage as TokenUsage
from gateway.upstream import DispatchError

Attributes = dict[str, str | bool | int | float | list[str]]

OPERATIONS = {
    Endpoint.CHAT: "chat",
    Endpoint.COMPLETIONS: "text_completion",
    Endpoint.EMBEDDINGS: "embeddings",
}
DEFAULT_PORTS = {"http": 80, "https": 443}
# Request fields the conventions name, copied when the client set them to a plain value.
REQUEST_PARAMETERS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "seed": "gen_ai.request.seed",
}


def operation_name(endpoint: Endpoint) -> str:
    return OPERATIONS[endpoint]


def provider_name(backend: Backend) -> str:
    """The conventions' `gen_ai.provider.name`: what the backend's provider kind declares
    (compiled into it; gateway/provider_kinds), e.g. `azure.ai.openai`. The conventions have
    no value for vLLM or other OpenAI-compatible servers: those keep the policy's own name."""
    return backend.telemetry_name or backend.provider


def span_name(operation: str, model: str) -> str:
    """`{gen_ai.operation.name} {gen_ai.request.model}`, e.g. `chat gpt-4o`."""
    return f"{operation} {model}"


def request_attributes(tenant: TenantContext, request: RouteRequest) -> Attributes:
    """What the client asked for and who it is: the request's server span."""
    attrs: Attributes = {
        "gen_ai.operation.name": operation_name(request.endpoint),
        "gen_ai.request.model": request.model,
        "gateway.tenant": tenant.tenant_name,
        "gateway.tenant_id": tenant.tenant_id,
        "gateway.request_id": request.request_id,
    }
    if request.stream:
        attrs["gen_ai.request.stream"] = True
    if request.max_output_tokens is not None:
        attrs["gen_ai.request.max_tokens"] = request.max_output_tokens
    if request.tags:
        attrs["gateway.tags"] = list(request.tags)
    attrs.update(_parameters(request.payload))
    return attrs


def _parameters(payload: Mapping[str, object]) -> Attributes:
    out: Attributes = {}
    for field, name in REQUEST_PARAMETERS.items():
        value = payload.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[name] = value
    choices = payload.get("n")
    if isinstance(choices, int) and not isinstance(choices, bool) and choices != 1:
        out["gen_ai.request.choice.count"] = choices
    stop = payload.get("stop")
    if isinstance(stop, str):
        out["gen_ai.request.stop_sequences"] = [stop]
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        out["gen_ai.request.stop_sequences"] = list(stop)
    return out


def profile_attributes(profile: Profile) -> Attributes:
    """What classification found (categories only: never the sensitive values)."""
    attrs: Attributes = {
        "gateway.prompt_tokens": profile.prompt_tokens,
        "gateway.prompt_tokens_exact": profile.prompt_tokens_exact,
        "gateway.sensitivity": list(profile.sensitivity),
    }
    if profile.complexity is not None:
        attrs["gateway.complexity"] = profile.complexity.label
        attrs["gateway.p_strong"] = profile.complexity.p_strong
    return attrs


def decision_attributes(decision: RouteDecision) -> Attributes:
    attrs: Attributes = {
        "gateway.rule": decision.rule,
        "gateway.backend": decision.primary.name,
        "gateway.candidates": [b.name for b in decision.candidates],
        "gateway.rejected": [f"{r.backend}: {r.reason}" for r in decision.rejected],
        "gateway.predicted_cost_micro_usd": decision.predicted_cost_micro_usd,
        "gateway.predicted_ttft_s": decision.predicted_ttft_s,
        "gateway.redact": decision.redact,
        "gateway.spill_over": decision.spilled,
    }
    if decision.objective is not None:
        attrs["gateway.objective"] = decision.objective
    if decision.affinity is not None:
        attrs["gateway.affinity"] = decision.affinity.value
    return attrs


def reservation_attributes(reserved_micro_usd: int | None) -> Attributes:
    """None: admitted unmetered (the budget store was down and the gateway fails open)."""
    if reserved_micro_usd is None:
        return {"gateway.unmetered": True}
    return {"gateway.unmetered": False, "gateway.reserved_micro_usd": reserved_micro_usd}


def upstream_attributes(backend: Backend, operation: str) -> Attributes:
    """One attempt at one backend: the upstream call's CLIENT span."""
    attrs: Attributes = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": provider_name(backend),
        "gen_ai.request.model": backend.model,
        "gateway.backend": backend.name,
        "gateway.zone": backend.zone,
    }
    url = urlsplit(backend.base_url)
    if url.hostname:
        attrs["server.address"] = url.hostname
        port = url.port or DEFAULT_PORTS.get(url.scheme)
        if port is not None:
            attrs["server.port"] = port
    return attrs


def usage_attributes(usage: TokenUsage) -> Attributes:
    """Token counts as the conventions define them: input includes cached tokens (OpenAI's
    `prompt_tokens` already does)."""
    attrs: Attributes = {
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.completion_tokens,
    }
    if usage.cached_tokens:
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cached_tokens
    return attrs


def dispatch_error_type(exc: BaseException) -> str:
    """`error.type` of a failed attempt: the upstream's HTTP status when it answered, else
    the failure's class (timeout, refused connection, the client leaving)."""
    if isinstance(exc, DispatchError):
        if exc.upstream_status is not None:
            return str(exc.upstream_status)
        return type(exc.error).__name__
    return type(exc).__name__


def outcome_attributes(
    backend: Backend | None,
    rule: str | None,
    usage: TokenUsage,
    cost_micro_usd: int,
    *,
    attempts: int,
    error: GatewayError | None,
    cancelled: bool,
) -> Attributes:
    """How the request ended: the server span's closing attributes."""
    status = 499 if cancelled else error.status if error is not None else 200
    attrs: Attributes = {
        "gateway.cost_micro_usd": cost_micro_usd,
        "gateway.attempts": attempts,
        "gateway.outcome": "client_disconnected" if cancelled
        else "error" if error is not None else "ok",
        "http.response.status_code": status,
    }
    if rule is not None:
        attrs["gateway.rule"] = rule
    if backend is not None:
        attrs["gateway.backend"] = backend.name
        attrs["gen_ai.provider.name"] = provider_name(backend)
        attrs["gen_ai.response.model"] = backend.model
        attrs.update(usage_attributes(usage))
    if error is not None and not cancelled:
        attrs["error.type"] = error.error_type
    return attrs
