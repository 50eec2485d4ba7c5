"""The providers requests are dispatched to, by provider kind: built from the provider
registry (or handed in by the caller), each closed at shutdown."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack

from gateway.provider_kinds.kind import UpstreamLimits
from gateway.provider_kinds.registry import build_providers
from gateway.settings import Settings
from gateway.upstream import Provider


def open_providers(stack: AsyncExitStack, settings: Settings,
                   injected: Mapping[str, Provider] | None) -> Mapping[str, Provider]:
    providers = injected if injected is not None else build_providers(UpstreamLimits(
        connect_timeout_s=settings.upstream_connect_timeout_s,
        read_timeout_s=settings.upstream_read_timeout_s,
        max_connections=settings.upstream_max_connections,
    ))
    # One instance may serve several kinds: each is closed once.
    for provider in {id(p): p for p in providers.values()}.values():
        stack.push_async_callback(provider.aclose)
    return providers
