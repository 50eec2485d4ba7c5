"""The built-in provider kinds' factories, and `build_providers`: one Provider per kind the
registry knows, built by the composition root.

The kinds themselves (policy keys, compile step, token counting, telemetry name) are declared
in gateway/provider_kinds, below this layer, so the policy can read them too; a factory needs
this package's Provider classes, so the built-in ones are attached here. Kinds registered from
outside the gateway carry their own factory.
"""

from __future__ import annotations

from gateway.provider_kinds.kind import ProviderFactory, ProviderKind, UpstreamLimits
from gateway.provider_kinds.registry import PROVIDER_KINDS, ProviderKinds
from gateway.providers.anthropic import AnthropicProvider
from gateway.providers.azure import AzureDialect
from gateway.providers.openai_compat import OpenAICompatProvider, OpenAIDialect
from gateway.upstream import Provider


def openai_compatible(limits: UpstreamLimits) -> Provider:
    """vLLM and any other `/v1/chat/completions` server: the body as sent."""
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections)


def openai(limits: UpstreamLimits) -> Provider:
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections, dialect=OpenAIDialect())


def azure(limits: UpstreamLimits) -> Provider:
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections, dialect=AzureDialect())


def anthropic(limits: UpstreamLimits) -> Provider:
    return AnthropicProvider(connect_timeout_s=limits.connect_timeout_s,
                             read_timeout_s=limits.read_timeout_s,
                             max_connections=limits.max_connections)


BUILT_IN_FACTORIES: dict[str, ProviderFactory] = {
    "vllm": openai_compatible,
    "openai_compat": openai_compatible,
    "openai": openai,
    "azure": azure,
    "anthropic": anthropic,
}


def factory_of(kind: ProviderKind) -> ProviderFactory:
    factory = kind.factory or BUILT_IN_FACTORIES.get(kind.name)
    if factory is None:
        raise LookupError(f"provider kind {kind.name} declares no factory")
    return factory


def build_providers(
    limits: UpstreamLimits, kinds: ProviderKinds = PROVIDER_KINDS
) -> dict[str, Provider]:
    """Provider by kind name, for every registered kind. Kinds with the same factory share
    one Provider (vllm and openai_compat: one connection pool per backend either way); the
    caller closes each distinct Provider once."""
    built: dict[ProviderFactory, Provider] = {}
    providers: dict[str, Provider] = {}
    for kind in kinds:
        factory = factory_of(kind)
        if factory not in built:
            built[factory] = factory(limits)
        providers[kind.name] = built[factory]
    return providers
