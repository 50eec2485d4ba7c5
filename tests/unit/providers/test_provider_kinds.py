"""The provider registry: a kind registered in one place is validated, compiled and built
like the built-in ones; the built-in kinds each get a Provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gateway.policy.loader import PolicyError, parse_policy
from gateway.policy.schema import PolicyFile
from gateway.provider_kinds.kind import ProviderKind, UpstreamLimits
from gateway.provider_kinds.registry import PROVIDER_KINDS, build_providers
from tests.support.toy_provider import TOY, ToyOptions, policy


@pytest.fixture
def toy_kind() -> Iterator[ProviderKind]:
    with PROVIDER_KINDS.registered(TOY) as kind:  # the one registration
        yield kind


def test_a_registered_kind_validates_its_own_keys_where_written(toy_kind: ProviderKind):
    backend = parse_policy(policy("http://127.0.0.1:1")).backends["toy-1"]
    assert backend.options == ToyOptions("pirate")
    assert backend.telemetry_name == "toy.example"
    assert backend.token_encoding is None and backend.token_ratio == 1.25  # estimated
    with pytest.raises(PolicyError) as info:
        parse_policy(policy("http://127.0.0.1:1", "voice: Loud, volume: 11"), "toy.yaml")
    assert sorted((p.path, p.line) for p in info.value.problems) == [
        ("backends[0].voice", 4), ("backends[0].volume", 4)]
    with pytest.raises(PolicyError, match="voice applies to provider toy only"):
        parse_policy(policy("http://127.0.0.1:1").replace("provider: toy", "provider: vllm"))
    properties = PolicyFile.model_json_schema()["$defs"]["BackendSpec"]["properties"]
    assert "toy" in properties["provider"]["enum"] and "voice" in properties


def test_an_unregistered_kind_is_refused():
    with pytest.raises(PolicyError) as info:
        parse_policy(policy("http://127.0.0.1:1"), "toy.yaml")
    problem = info.value.problems[0]
    assert (problem.path, problem.line) == ("backends[0].provider", 3)
    assert "'anthropic'" in problem.message and "toy" not in problem.message


def test_built_in_kinds_each_get_a_provider_and_kinds_with_one_factory_share_it():
    providers = build_providers(UpstreamLimits())
    assert set(providers) == {"vllm", "openai", "openai_compat", "azure", "anthropic"}
    assert providers["vllm"] is providers["openai_compat"]
    assert len({id(p) for p in providers.values()}) == 4


def test_a_kind_is_registered_once_and_leaves_with_its_block():
    with PROVIDER_KINDS.registered(TOY):
        with pytest.raises(ValueError, match="already registered"):
            PROVIDER_KINDS.register(TOY)
        assert "toy" in build_providers(UpstreamLimits())
    assert PROVIDER_KINDS.get("toy") is None
