"""The anthropic kind: Claude through Anthropic's Messages API (what its provider is sent,
translated from OpenAI chat by gateway/translate, which its replies are translated back to),
its key in `x-api-key`, prompts counted by its count_tokens."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from gateway.provider_kinds.kind import OptionsSpec, ProviderKind
from gateway.types import Backend, Endpoint, ProviderOptions

DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
# Anthropic requires max_tokens; LiteLLM uses the same default (DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS).
DEFAULT_MAX_TOKENS = 4096


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


@dataclass(frozen=True, slots=True)
class AnthropicOptions(ProviderOptions):
    """The anthropic-version header, and max_tokens when the client sets none."""

    anthropic_version: str = DEFAULT_ANTHROPIC_VERSION
    default_max_tokens: int = DEFAULT_MAX_TOKENS


DEFAULT_ANTHROPIC_OPTIONS = AnthropicOptions()


def anthropic_options(backend: Backend) -> AnthropicOptions:
    """The backend's Anthropic options (the defaults for a Backend built without them)."""
    options = backend.options
    return options if isinstance(options, AnthropicOptions) else DEFAULT_ANTHROPIC_OPTIONS


def _compile(spec: AnthropicSpec) -> AnthropicOptions:
    return AnthropicOptions(spec.anthropic_version or DEFAULT_ANTHROPIC_VERSION,
                            spec.default_max_tokens or DEFAULT_MAX_TOKENS)


def messages_root(base_url: str) -> str:
    """base_url with or without its /v1 (as the policy's OpenAI URLs have it) → .../v1."""
    return base_url if base_url.endswith("/v1") else f"{base_url}/v1"


def count_tokens_url(base_url: str) -> str:
    return f"{messages_root(base_url)}/messages/count_tokens"


ANTHROPIC = ProviderKind(
    name="anthropic", telemetry_name="anthropic", options=AnthropicSpec,
    compile=_compile, api_key_header="x-api-key",
    count_url=count_tokens_url, count_api="anthropic", responses="never",
    serves=frozenset({Endpoint.MESSAGES}), simulated_api="anthropic",
)
