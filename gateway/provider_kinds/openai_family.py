"""The OpenAI-compatible kinds: vllm (a vLLM engine: scraped, /tokenize), openai_compat (any
other `/v1/chat/completions` server) and openai (api.openai.com: exact token counts in the
model's encoding, the Responses API natively). Azure, a member of the family with its own
URLs, is azure.py."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from gateway.provider_kinds.kind import OptionsSpec, ProviderKind, TokenCount, UpstreamLimits
from gateway.providers.http_pool import upstream_headers
from gateway.providers.openai_compat import OpenAICompatProvider, OpenAIDialect
from gateway.types import Backend, Endpoint, Payload
from gateway.types.provider_options import (
    MaxTokensField,
    OpenAIOptions,
    VllmOptions,
    reasoning_model,
)

# OpenAI models by name: the GPT-4o generation onwards use o200k, GPT-4 and GPT-3.5 cl100k.
_O200K_MODELS = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4",
                 "gpt-oss", "codex")
_CL100K_MODELS = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada")
REFERENCE_ENCODING = "o200k_base"


def openai_encoding(model: str) -> str:
    """The encoding an OpenAI model name implies (o200k for names not recognised)."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(_O200K_MODELS):
        return "o200k_base"
    if name.startswith(_CL100K_MODELS):
        return "cl100k_base"
    return REFERENCE_ENCODING


class OpenAIFamilySpec(OptionsSpec):
    max_tokens_field: MaxTokensField | None = Field(
        default=None,
        description="OpenAI family: the field that carries the client's token limit upstream; "
        "auto (default) renames max_tokens to max_completion_tokens for o-series and gpt-5",
    )


def _vllm(spec: OpenAIFamilySpec) -> VllmOptions:
    return VllmOptions(spec.max_tokens_field or "auto")


def _openai(spec: OpenAIFamilySpec) -> OpenAIOptions:
    return OpenAIOptions(spec.max_tokens_field or "auto")


def openai_compatible(limits: UpstreamLimits) -> OpenAICompatProvider:
    """vLLM and any other `/v1/chat/completions` server: the body as sent."""
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections)


def _openai_provider(limits: UpstreamLimits) -> OpenAICompatProvider:
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections, dialect=OpenAIDialect())


def engine_url(base_url: str, path: str) -> str:
    """vLLM serves /metrics and /tokenize at the server root, while base_url is usually its
    /v1."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{root}/{path}", "", ""))


def vllm_metrics_url(base_url: str) -> str:
    return engine_url(base_url, "metrics")


def vllm_tokenize_url(base_url: str) -> str:
    return engine_url(base_url, "tokenize")


def tokenize_body(
    backend: Backend, endpoint: Endpoint, payload: Payload
) -> dict[str, object] | None:
    """vLLM's /tokenize request: `messages` (templated as for a chat completion) or `prompt`."""
    if endpoint is Endpoint.CHAT and isinstance(payload.get("messages"), list):
        body: dict[str, object] = {"model": backend.model, "messages": payload["messages"],
                                   "add_generation_prompt": True}
        if payload.get("tools"):
            body["tools"] = payload["tools"]
        return body
    if endpoint is Endpoint.COMPLETIONS and isinstance(payload.get("prompt"), str):
        return {"model": backend.model, "prompt": payload["prompt"]}
    return None  # batches, token ids, embeddings: the estimate stands


VLLM = ProviderKind(
    name="vllm", telemetry_name="vllm", factory=openai_compatible, options=OpenAIFamilySpec,
    compile=_vllm, metrics_url=vllm_metrics_url, simulated_api="vllm",
    token_count=TokenCount(url=vllm_tokenize_url, body=tokenize_body,
                           headers=upstream_headers, answer_field="count"),
)
# The same Provider as vllm (one connection pool per base_url either way): no engine to ask.
OPENAI_COMPAT = ProviderKind(
    name="openai_compat", telemetry_name="openai_compat", factory=openai_compatible,
    options=OpenAIFamilySpec, compile=_vllm, simulated_api="vllm",
)
OPENAI = ProviderKind(
    name="openai", telemetry_name="openai", factory=_openai_provider, options=OpenAIFamilySpec,
    compile=_openai, encoding=openai_encoding, responses="native",
    reasoning_effort=reasoning_model, simulated_api="openai",
)
