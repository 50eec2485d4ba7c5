"""Per-backend prompt counts: exact in the OpenAI encoding a model uses, or an estimate with a
margin for tokenizers the gateway does not ship; context windows, thresholds and prices
follow the backend's own count."""

from __future__ import annotations

import pytest

from gateway.errors import NoEligibleBackend
from gateway.policy.engine import decide
from gateway.policy.loader import PolicyError, parse_policy
from gateway.policy.token_counting import engine_key, needs_engine_count, prompt_tokens_for
from gateway.provider_kinds.openai_family import openai_encoding
from gateway.routing.budgeting import worst_case
from gateway.types import Endpoint, FleetSnapshot, Profile, RouteRequest, TenantContext

POLICY = """\
version: 1
backends:
  - name: llama
    provider: vllm
    base_url: http://127.0.0.1:9001/v1
    model: meta-llama/Llama-3.1-8B-Instruct
    context_window: 32768
    price_per_mtok_usd: {input: 1.0, output: 1.0}
  - name: llama-wide
    provider: vllm
    base_url: http://127.0.0.1:9002/v1
    model: l
    context_window: 32768
    tokens: {count: estimate, ratio: 1.5}
  - name: gpt-oss
    provider: vllm
    base_url: http://127.0.0.1:9003/v1
    model: openai/gpt-oss-20b
    context_window: 32768
    tokens: {count: o200k_base}
  - name: gpt4
    provider: openai
    base_url: https://api.example.com/v1
    model: gpt-4-turbo
    zone: external
    context_window: 128000
    price_per_mtok_usd: {input: 10.0, output: 30.0}
  - name: gpt4o
    provider: azure
    base_url: https://example.openai.azure.com/openai/v1
    model: gpt-4o-2024-08-06
    zone: external
    context_window: 128000
  - name: claude
    provider: anthropic
    base_url: https://api.anthropic.com
    model: claude-sonnet-4
    zone: external
    context_window: 200000
models:
  home: [llama, llama-wide, gpt-oss]
  legacy: [gpt4, gpt4o]
rules:
  - {name: stay-home, when: {sensitivity: [pii, secret, phi]}, allow_zones: [self_hosted]}
"""
TENANT = TenantContext(tenant_id=1, tenant_name="acme", key_id=1)
POLICY_SET = parse_policy(POLICY)


def request(model: str) -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, model, {"messages": []}, max_output_tokens=256)


def test_openai_model_names_pick_their_encoding() -> None:
    assert openai_encoding("gpt-4o-mini") == "o200k_base"
    assert openai_encoding("o3-mini") == "o200k_base"
    assert openai_encoding("azure/gpt-4.1") == "o200k_base"
    assert openai_encoding("gpt-4-turbo") == "cl100k_base"
    assert openai_encoding("gpt-3.5-turbo-0125") == "cl100k_base"
    assert openai_encoding("my-deployment") == "o200k_base"


def test_defaults_by_family_and_explicit_settings() -> None:
    backends = POLICY_SET.backends
    assert (backends["llama"].token_encoding, backends["llama"].token_ratio) == (None, 1.25)
    assert (backends["claude"].token_encoding, backends["claude"].token_ratio) == (None, 1.25)
    assert backends["llama-wide"].token_ratio == 1.5
    assert backends["gpt-oss"].token_encoding == "o200k_base"
    assert backends["gpt4"].token_encoding == "cl100k_base"
    assert backends["gpt4o"].token_encoding == "o200k_base"


def test_a_ratio_without_an_estimate_is_refused_with_its_place() -> None:
    text = POLICY.replace("tokens: {count: o200k_base}", "tokens: {count: o200k_base, ratio: 2}")
    with pytest.raises(PolicyError, match="ratio applies to count: estimate or tokenize only"):
        parse_policy(text)


def test_windows_apply_to_each_backends_own_count() -> None:
    # 24,000 o200k tokens: 30,000 (x1.25) fits 32,768 - 256; 36,000 (x1.5) does not.
    decision = decide(request("home"), Profile(24_000, 256), TENANT, FleetSnapshot(), POLICY_SET)
    assert {b.name for b in decision.candidates} == {"llama", "gpt-oss"}
    reason = next(r.reason for r in decision.rejected if r.backend == "llama-wide")
    assert "prompt 36000" in reason
    # 27,000: only the exactly counted backend still fits.
    decision = decide(request("home"), Profile(27_000, 256), TENANT, FleetSnapshot(), POLICY_SET)
    assert [b.name for b in decision.candidates] == ["gpt-oss"]
    with pytest.raises(NoEligibleBackend):
        decide(request("home"), Profile(32_600, 256), TENANT, FleetSnapshot(), POLICY_SET)


def test_thresholds_are_where_each_backend_stops_fitting() -> None:
    room = 32768 - 256
    assert POLICY_SET.token_thresholds("home", 256) == (room // 1.5, room // 1.25, room)
    assert POLICY_SET.other_encodings("home", 256) == ()
    assert POLICY_SET.token_thresholds("legacy", 256) == (128000 - 256,)
    assert POLICY_SET.other_encodings("legacy", 256) == (("cl100k_base", (128000 - 256,)),)


def test_cl100k_backends_use_the_cl100k_count() -> None:
    gpt4 = POLICY_SET.backends["gpt4"]
    counted = Profile(1000, 256, prompt_tokens_by_encoding=(("cl100k_base", 1400),))
    assert prompt_tokens_for(gpt4, counted) == 1400
    # Without that count (a replayed audit row keeps only o200k): estimated with the margin.
    assert prompt_tokens_for(gpt4, Profile(1000, 256)) == 1250


def test_budget_reserves_the_largest_count_at_its_price() -> None:
    profile = Profile(1000, 100, prompt_tokens_by_encoding=(("cl100k_base", 1400),))
    decision = decide(request("legacy"), profile, TENANT, FleetSnapshot(), POLICY_SET)
    cost, tokens = worst_case(profile, decision)
    assert tokens == 1400 + 100
    assert cost == 1400 * 10 + 100 * 30  # micro-USD at $10/$30 per million


def test_engines_that_count_for_themselves() -> None:
    text = POLICY.replace("tokens: {count: estimate, ratio: 1.5}",
                          "tokens: {count: tokenize, ratio: 1.5}")
    wide = parse_policy(text).backends["llama-wide"]
    assert wide.tokenize_url == "http://127.0.0.1:9002/tokenize"
    assert parse_policy(POLICY).backends["llama"].tokenize_url is None  # only when asked
    fits = Profile(20_000, 256)  # 30,000 at 1.5x: fits 32,768, nothing to ask
    over = Profile(24_000, 256)  # 36,000 at 1.5x: the estimate would refuse it
    assert not needs_engine_count(wide, fits) and needs_engine_count(wide, over)
    counted = Profile(24_000, 256, prompt_tokens_by_encoding=((engine_key(wide), 26_500),))
    assert prompt_tokens_for(wide, counted) == 26_500
    decision = decide(request("home"), counted, TENANT, FleetSnapshot(), parse_policy(text))
    assert "llama-wide" in {b.name for b in decision.candidates}


def test_only_vllm_and_anthropic_backends_can_be_asked() -> None:
    text = POLICY.replace("    model: gpt-4-turbo\n", "    model: gpt-4-turbo\n"
                          "    tokens: {count: tokenize}\n")
    with pytest.raises(PolicyError, match="needs provider vllm"):
        parse_policy(text)
    counted = POLICY.replace("    model: claude-sonnet-4\n",
                             "    model: claude-sonnet-4\n    tokens: {count: tokenize}\n")
    claude = parse_policy(counted).backends["claude"]
    assert claude.tokenize_url == "https://api.anthropic.com/v1/messages/count_tokens"
