"""Policy fields of the commercial providers: validated where written, carried into Backend."""

from __future__ import annotations

import pytest

from gateway.policy.loader import PolicyError, parse_policy
from gateway.types.provider_options import AnthropicOptions, AzureOptions

RULES = """\
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, phi, secret]}
    allow_zones: [self_hosted]
"""


def policy(backend: str) -> str:
    return (f"version: 1\nbackends:\n  - {{name: b, context_window: 1000, zone: external, "
            f"{backend}}}\n  - {{name: home, provider: vllm, base_url: 'http://h/v1', "
            f"model: m, context_window: 1000}}\n{RULES}")


def test_anthropic_defaults_and_overrides():
    backend = parse_policy(policy(
        "provider: anthropic, base_url: 'https://api.anthropic.com', model: claude-x, "
        "api_key_env: ANTHROPIC_API_KEY")).backends["b"]
    # Compiled into the kind's own options, the defaults resolved.
    assert backend.auth == "api_key" and backend.options == AnthropicOptions("2023-06-01", 4096)
    assert backend.telemetry_name == "anthropic"
    custom = parse_policy(policy(
        "provider: anthropic, base_url: 'https://gw.example/v1', model: claude-x, auth: bearer, "
        "anthropic_version: '2023-06-01', default_max_tokens: 2048")).backends["b"]
    assert (custom.auth, custom.options) == ("bearer", AnthropicOptions("2023-06-01", 2048))


def test_azure_classic_and_v1():
    classic = parse_policy(policy(
        "provider: azure, base_url: 'https://r.openai.azure.com', model: gpt-4o, "
        "deployment: prod-4o, api_version: '2024-10-21', api_key_env: AZURE_OPENAI_API_KEY"
    )).backends["b"]
    assert (classic.options, classic.auth) == (
        AzureOptions("auto", "prod-4o", "2024-10-21"), "api_key")
    v1 = parse_policy(policy(
        "provider: azure, base_url: 'https://r.openai.azure.com/openai/v1/', model: prod-4o, "
        "auth: bearer, max_tokens_field: max_completion_tokens")).backends["b"]
    assert v1.options == AzureOptions("max_completion_tokens") and v1.auth == "bearer"
    assert v1.base_url == "https://r.openai.azure.com/openai/v1"


@pytest.mark.parametrize("backend,problem", [
    ("provider: azure, base_url: 'https://r.openai.azure.com', model: m",
     "needs a deployment"),
    ("provider: azure, base_url: 'https://r.openai.azure.com', model: m, deployment: d",
     "needs api_version"),
    ("provider: vllm, base_url: 'http://v/v1', model: m, deployment: d", "azure only"),
    ("provider: openai, base_url: 'https://api.openai.com/v1', model: m, "
     "anthropic_version: '2023-06-01'", "anthropic only"),
    ("provider: vllm, base_url: 'http://v/v1', model: m, default_max_tokens: 9",
     "anthropic only"),
    ("provider: anthropic, base_url: 'https://a', model: m, max_tokens_field: max_tokens",
     "applies to providers vllm, openai, openai_compat and azure only"),
    ("provider: openai, base_url: 'https://api.openai.com/v1', model: m, auth: api_key",
     "azure and anthropic only"),
    ("provider: anthropic, base_url: 'https://a', model: m, anthropic_version: latest",
     "String should match"),
    ("provider: bedrock, base_url: 'https://a', model: m", "Input should be"),
])
def test_provider_fields_are_validated_where_written(backend: str, problem: str):
    with pytest.raises(PolicyError) as info:
        parse_policy(policy(backend), "p.yaml")
    found = info.value.problems[0]
    assert problem in found.message and found.path.startswith("backends[0]")
    assert found.line == 3


def test_shared_and_kind_keys_are_checked_together_each_at_its_own_line():
    text = """\
version: 1
backends:
  - name: b
    provider: azure
    base_url: https://r.openai.azure.com
    model: gpt-4o
    context_window: 0
    deployment: "bad deployment"
    anthropic_version: '2023-06-01'
    colour: blue
"""
    with pytest.raises(PolicyError) as info:
        parse_policy(text, "p.yaml")
    found = {(p.path, p.line): p.message for p in info.value.problems}
    assert set(found) == {("backends[0].context_window", 7), ("backends[0].deployment", 8),
                          ("backends[0].anthropic_version", 9), ("backends[0].colour", 10)}
    assert found[("backends[0].anthropic_version", 9)] == (
        "anthropic_version applies to provider anthropic only")
    assert found[("backends[0].colour", 10)] == (
        "unknown key 'colour'; `gateway policy schema` lists the valid keys")


def test_an_options_block_is_not_a_policy_key():
    with pytest.raises(PolicyError) as info:
        parse_policy(policy("provider: openai, base_url: 'https://api.openai.com/v1', model: m, "
                            "options: {max_tokens_field: max_tokens}"))
    assert [p.path for p in info.value.problems] == ["backends[0].options"]
