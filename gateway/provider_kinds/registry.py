"""The provider kinds a policy may name, in one table: the built-in ones, and any registered;
and `build_providers`, one Provider per kind, for the composition root.

A kind is code, not state: the table is filled at import (the built-in kinds below) or by
`register` from code that ships a new kind, before any policy naming it is loaded. Looking a
kind up happens when a policy is validated and compiled, when the composition root builds
the providers, and when an upstream is asked for a prompt's count; never on every request
(what a request needs is compiled into its Backend).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gateway.provider_kinds.anthropic import ANTHROPIC
from gateway.provider_kinds.azure import AZURE
from gateway.provider_kinds.kind import ProviderFactory, ProviderKind, UpstreamLimits
from gateway.provider_kinds.openai_family import OPENAI, OPENAI_COMPAT, VLLM
from gateway.upstream import Provider


class ProviderKinds:
    """Kinds by name, in registration order (the order errors and the schema list them in)."""

    def __init__(self, kinds: tuple[ProviderKind, ...]) -> None:
        self._kinds: dict[str, ProviderKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ProviderKind) -> None:
        if kind.name in self._kinds:
            raise ValueError(f"provider kind {kind.name} is already registered")
        self._kinds[kind.name] = kind

    def unregister(self, name: str) -> None:
        del self._kinds[name]

    @contextmanager
    def registered(self, kind: ProviderKind) -> Iterator[ProviderKind]:
        """The kind is known inside the block only (tests, tools that add one for a while)."""
        self.register(kind)
        try:
            yield kind
        finally:
            self.unregister(kind.name)

    def get(self, name: object) -> ProviderKind | None:
        return self._kinds.get(name) if isinstance(name, str) else None

    def __getitem__(self, name: str) -> ProviderKind:
        return self._kinds[name]

    def __iter__(self) -> Iterator[ProviderKind]:
        return iter(tuple(self._kinds.values()))

    def names(self) -> tuple[str, ...]:
        return tuple(self._kinds)


BUILT_IN_KINDS = (VLLM, OPENAI, OPENAI_COMPAT, AZURE, ANTHROPIC)
PROVIDER_KINDS = ProviderKinds(BUILT_IN_KINDS)


def build_providers(
    limits: UpstreamLimits, kinds: ProviderKinds = PROVIDER_KINDS
) -> dict[str, Provider]:
    """Provider by kind name, for every registered kind. Kinds with the same factory share
    one Provider (vllm and openai_compat: one connection pool per backend either way); the
    caller closes each distinct Provider once."""
    built: dict[ProviderFactory, Provider] = {}
    providers: dict[str, Provider] = {}
    for kind in kinds:
        if kind.factory not in built:
            built[kind.factory] = kind.factory(limits)
        providers[kind.name] = built[kind.factory]
    return providers


def listed(names: list[str] | tuple[str, ...], conjunction: str = "and") -> str:
    """`a`, `a and b`, `a, b and c`: kinds named in a message."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"
