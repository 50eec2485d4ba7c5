"""The anthropic kind: Claude through Anthropic's Messages API (what its provider is sent,
translated from OpenAI chat by gateway/translate, which its replies are translated back to),
its key in `x-api-key`, prompts counted by its count_tokens."""

from __future__ import annotations

from pydantic import Field

from gateway.provider_kinds.kind import OptionsSpec, ProviderKind, TokenCount, UpstreamLimits
from gateway.providers.anthropic import (
    API_KEY_HEADER,
    AnthropicProvider,
    anthropic_headers,
    messages_root,
)
from gateway.types import Backend, Endpoint, Payload
from gateway.types.provider_options import (
    DEFAULT_ANTHROPIC_VERSION,
    DEFAULT_MAX_TOKENS,
    AnthropicOptions,
)

# What Anthropic's count_tokens accepts of a Messages request (it refuses max_tokens etc.).
_COUNT_FIELDS = ("model", "messages", "system", "tools", "tool_choice", "thinking")


class AnthropicSpec(OptionsSpec):
    anthropic_version: str | None = Field(
        default=None, pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="anthropic: the anthropic-version header (default 2023-06-01)",
    )
    default_max_tokens: int | None = Field(
        default=None, ge=1,
        description="anthropic: max_tokens sent when the client sets none (Anthropic requires "
        "it; default 4096)",
    )


def _compile(spec: AnthropicSpec) -> AnthropicOptions:
    return AnthropicOptions(spec.anthropic_version or DEFAULT_ANTHROPIC_VERSION,
                            spec.default_max_tokens or DEFAULT_MAX_TOKENS)


def _provider(limits: UpstreamLimits) -> AnthropicProvider:
    return AnthropicProvider(connect_timeout_s=limits.connect_timeout_s,
                             read_timeout_s=limits.read_timeout_s,
                             max_connections=limits.max_connections)


def count_tokens_url(base_url: str) -> str:
    return f"{messages_root(base_url)}/messages/count_tokens"


def count_tokens_body(
    backend: Backend, endpoint: Endpoint, payload: Payload
) -> dict[str, object] | None:
    """The request's Messages payload (what the backend serves, as for a completion), less
    what count_tokens refuses."""
    if endpoint is not Endpoint.MESSAGES or not isinstance(payload.get("messages"), list):
        return None
    return {k: payload[k] for k in _COUNT_FIELDS if k in payload}


ANTHROPIC = ProviderKind(
    name="anthropic", telemetry_name="anthropic", factory=_provider, options=AnthropicSpec,
    compile=_compile, api_key_header=API_KEY_HEADER,
    token_count=TokenCount(url=count_tokens_url, body=count_tokens_body,
                           headers=anthropic_headers, answer_field="input_tokens"),
    responses="never", serves=frozenset({Endpoint.MESSAGES}), simulated_api="anthropic",
)
