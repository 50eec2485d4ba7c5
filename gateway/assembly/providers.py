"""The providers requests are dispatched to, by provider kind: built in one place (or handed
in by the caller), each closed at shutdown."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack

from gateway.providers.anthropic import AnthropicProvider
from gateway.providers.azure import AzureDialect
from gateway.providers.openai_compat import OpenAICompatProvider, OpenAIDialect
from gateway.settings import Settings
from gateway.upstream import Provider


def open_providers(stack: AsyncExitStack, settings: Settings,
                   injected: Mapping[str, Provider] | None) -> Mapping[str, Provider]:
    providers = injected if injected is not None else build_providers(settings)
    # One instance may serve several kinds: each is closed once.
    for provider in {id(p): p for p in providers.values()}.values():
        stack.push_async_callback(provider.aclose)
    return providers


def build_providers(settings: Settings) -> dict[str, Provider]:
    """Provider kind → provider: the one place provider instances are built."""
    limits = {
        "connect_timeout_s": settings.upstream_connect_timeout_s,
        "read_timeout_s": settings.upstream_read_timeout_s,
        "max_connections": settings.upstream_max_connections,
    }
    compat = OpenAICompatProvider(**limits)
    return {
        "vllm": compat,
        "openai_compat": compat,
        "openai": OpenAICompatProvider(**limits, dialect=OpenAIDialect()),
        "azure": OpenAICompatProvider(**limits, dialect=AzureDialect()),
        "anthropic": AnthropicProvider(**limits),
    }
