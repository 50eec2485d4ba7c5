"""The providers requests are dispatched to, by provider kind: the one place they are built."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack

from gateway.providers.anthropic import AnthropicProvider
from gateway.providers.azure import AzureDialect
from gateway.providers.openai_compat import OpenAICompatProvider, OpenAIDialect
from gateway.settings import Settings
from gateway.upstream import Provider


def open_providers(stack: AsyncExitStack, settings: Settings) -> Mapping[str, Provider]:
    limits = {
        "connect_timeout_s": settings.upstream_connect_timeout_s,
        "read_timeout_s": settings.upstream_read_timeout_s,
        "max_connections": settings.upstream_max_connections,
    }
    # --- provider construction: kind → provider (one instance may serve several kinds) ---
    compat = OpenAICompatProvider(**limits)
    providers: dict[str, Provider] = {
        "vllm": compat,
        "openai_compat": compat,
        "openai": OpenAICompatProvider(**limits, dialect=OpenAIDialect()),
        "azure": OpenAICompatProvider(**limits, dialect=AzureDialect()),
        "anthropic": AnthropicProvider(**limits),
    }
    # --- end of provider construction ---
    for provider in set(providers.values()):
        stack.push_async_callback(provider.aclose)
    return providers
