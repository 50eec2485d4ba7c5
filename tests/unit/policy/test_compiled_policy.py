"""The compiled policy holds objects and enums: rules and the shadow block hold the policy's own
Backend objects, and pool strategies, budget states, auth schemes, rejection kinds and limit
reasons are enum members spelled exactly as in the YAML, the audit row and the Lua script."""

from __future__ import annotations

import re
from importlib import resources
from typing import get_args

import pytest

from gateway.budget.limits import LimitReason
from gateway.errors import NoEligibleBackend
from gateway.policy.capacity import TelemetryPolicy, assess
from gateway.policy.engine import decide
from gateway.policy.load_state import load_rejected
from gateway.policy.loader import parse_policy
from gateway.policy.rule_schema import When
from gateway.policy.runtime import PoolStrategy
from gateway.policy.schema import BackendSpec, ModelPoolSpec
from gateway.types import (
    AuthScheme,
    BackendLoad,
    BackendState,
    BudgetState,
    Circuit,
    Endpoint,
    FleetSnapshot,
    Profile,
    Rejection,
    RejectionKind,
    RouteRequest,
    TenantContext,
)

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9001/v1", model: m,
     context_window: 4096, quality_tier: 1}
  - {name: b, provider: vllm, base_url: "http://127.0.0.1:9002/v1", model: m,
     context_window: 32768, quality_tier: 3}
  - {name: api, provider: openai, base_url: "https://api.example.com/v1", model: gpt,
     zone: external, context_window: 128000, quality_tier: 4,
     price_per_mtok_usd: {input: 2.5, output: 10}}
  - {name: claude, provider: anthropic, base_url: "https://anthropic.example.com/v1",
     model: c, zone: external, context_window: 128000,
     price_per_mtok_usd: {input: 3, output: 15}}
models:
  auto: {backends: [a, b], strategy: least_in_flight}
  plain: [a, b]
rules:
  - name: home
    when: {sensitivity: [pii, secret, phi]}
    backends: [a, b, api]
    allow_zones: [self_hosted]
    min_quality_tier: 2
  - name: thrifty
    when: {budget: [soft_limit]}
    backends: [a, b]
    allow_backends: [a, b]
    prefer: [b]
    fallbacks: [api]
    spill_to: [api]
shadow: {sample: 0.1, strong: api, judge: b, daily_usd: 1}
"""
TENANT = TenantContext("t1", "acme", "k1")
NOW = 100.0


def request(model: str = "auto") -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, model, {"model": model})


def test_rules_and_the_shadow_hold_the_policys_own_backend_objects() -> None:
    policy = parse_policy(POLICY)
    thrifty = policy.rules[1]
    backends = policy.backends
    assert thrifty.backends is not None
    assert all(b is backends[b.name] for b in thrifty.backends)
    assert [b.name for b in thrifty.backends] == ["a", "b"]
    assert thrifty.prefer[0] is backends["b"] and len(thrifty.prefer) == 1
    assert thrifty.fallbacks[0] is backends["api"] and thrifty.spill_to[0] is backends["api"]
    assert policy.shadow is not None
    assert policy.shadow.strong is backends["api"] and policy.shadow.judge is backends["b"]
    # And the pools hold the same objects the rules do.
    assert all(p is backends[p.name] for p in policy.pools["auto"].backends)


def test_strategies_budget_states_and_auth_schemes_compile_to_enum_members() -> None:
    policy = parse_policy(POLICY)
    assert policy.pools["auto"].strategy is PoolStrategy.LEAST_IN_FLIGHT
    assert policy.pools["plain"].strategy is PoolStrategy.LOAD_AWARE
    assert policy.rules[1].budget == frozenset({BudgetState.SOFT_LIMIT})
    assert all(type(s) is BudgetState for s in policy.rules[1].budget)
    assert policy.backends["a"].auth is AuthScheme.BEARER
    assert policy.backends["claude"].auth is AuthScheme.API_KEY  # the kind's own key header


def test_the_enums_are_spelled_as_the_schema_and_the_lua_script_spell_them() -> None:
    strategy = ModelPoolSpec.model_fields["strategy"].annotation
    assert set(get_args(strategy)) == {s.value for s in PoolStrategy}
    (budget,) = get_args(get_args(When.model_fields["budget"].annotation)[0])
    assert set(get_args(budget)) == {s.value for s in BudgetState}
    (auth,) = (a for a in get_args(BackendSpec.model_fields["auth"].annotation) if get_args(a))
    assert set(get_args(auth)) == {s.value for s in AuthScheme}
    lua = resources.files("gateway.budget").joinpath("lua/admit.lua").read_text()
    assert set(re.findall(r"\{'([a-z_]+)', s\.", lua)) == {r.value for r in LimitReason}


def test_the_budget_state_picks_the_rule() -> None:
    policy = parse_policy(POLICY)
    profile = Profile(100, 10)
    soft = decide(request(), profile, TENANT, FleetSnapshot(), policy, over_soft_limit=True)
    assert soft.rule == "thrifty" and soft.primary is policy.backends["b"]  # preferred
    assert [b.name for b in soft.fallbacks] == ["a"]
    assert [(r.backend, r.kind) for r in soft.rejected] == [("api", RejectionKind.NOT_ALLOWED)]
    ok = decide(request(), profile, TENANT, FleetSnapshot(), policy)
    assert ok.rule == "model-pool"


def test_hard_filters_say_their_kind() -> None:
    policy = parse_policy(POLICY)
    pii = Profile(5000, 10, sensitivity=("pii",))
    decision = decide(request("plain"), pii, TENANT, FleetSnapshot(), policy)
    assert {r.backend: r.kind for r in decision.rejected} == {
        "a": RejectionKind.CONTEXT_WINDOW, "api": RejectionKind.ZONE}
    small = Profile(100, 10, sensitivity=("pii",))
    decision = decide(request("plain"), small, TENANT, FleetSnapshot(), policy)
    assert {r.backend: r.kind for r in decision.rejected} == {
        "a": RejectionKind.QUALITY_TIER, "api": RejectionKind.ZONE}


def test_a_request_too_long_for_every_allowed_backend_is_the_clients_error_by_kind() -> None:
    # a and b are too small; api, which would fit, is outside the rule's zones.
    policy = parse_policy(POLICY)
    huge = Profile(100_000, 10, sensitivity=("pii",))
    with pytest.raises(NoEligibleBackend) as caught:
        decide(request("plain"), huge, TENANT, FleetSnapshot(), policy)
    assert caught.value.status == 400 and caught.value.code == "context_length_exceeded"


def _load(**fields: object) -> BackendLoad:
    values: dict[str, object] = {"engine": "vllm", "running": 0, "waiting": 0,
                                 "kv_usage": 0.1, "kv_capacity_tokens": 10_000,
                                 "scraped_at_s": NOW - 0.5}
    values.update(fields)
    return BackendLoad(**values)  # type: ignore[arg-type]


def test_load_says_its_kind() -> None:
    backend = parse_policy(POLICY).backends["a"]
    policy = TelemetryPolicy()
    assert assess(backend, None, 100, NOW, policy).kind is None
    stale = BackendState(load=_load(scraped_at_s=NOW - 60))
    kv_full = BackendState(load=_load(kv_usage=0.99))
    queued = BackendState(load=_load(running=4, waiting=3))
    assert assess(backend, stale, 100, NOW, policy).kind is RejectionKind.STALE_METRICS
    assert assess(backend, kv_full, 500, NOW, policy).kind is RejectionKind.KV_FULL
    assert assess(backend, queued, 100, NOW, policy).kind is RejectionKind.QUEUED


def test_an_open_circuit_is_a_load_rejection() -> None:
    policy = parse_policy(POLICY)
    fleet = FleetSnapshot({"a": BackendState(circuit=Circuit.OPEN, retry_at_s=1e9)}, NOW)
    decision = decide(request("plain"), Profile(100, 10), TENANT, fleet, policy)
    assert [(r.backend, r.kind) for r in decision.rejected] == [("a", RejectionKind.CIRCUIT_OPEN)]
    assert load_rejected(decision.rejected) == ("a",)


def test_what_was_set_aside_for_load_is_read_from_the_kind_never_the_words() -> None:
    rejected = (
        Rejection("a", "zone words, but the engine's KV was full", RejectionKind.KV_FULL),
        Rejection("b", "metrics stale, but the rule allowed another zone", RejectionKind.ZONE),
        Rejection("c", "context_window words on a queue", RejectionKind.QUEUED),
        Rejection("d", "predicted TTFT words on a quality floor", RejectionKind.QUALITY_TIER),
    )
    assert load_rejected(rejected) == ("a", "c")
    assert [k for k in RejectionKind if k.by_load] == [
        RejectionKind.STALE_METRICS, RejectionKind.KV_FULL, RejectionKind.QUEUED,
        RejectionKind.CIRCUIT_OPEN, RejectionKind.TTFT_TARGET, RejectionKind.TPOT_TARGET,
    ]
    assert {k for k in RejectionKind if k.by_rule} == {RejectionKind.ZONE,
                                                       RejectionKind.NOT_ALLOWED}


def test_limit_reasons_say_their_period_unit_and_kind() -> None:
    assert [r for r in LimitReason if r.rate] == [LimitReason.RPM, LimitReason.TPM,
                                                  LimitReason.CONCURRENT]
    assert {r for r in LimitReason if r.daily} == {LimitReason.DAILY_USD,
                                                   LimitReason.DAILY_TOKENS}
    assert {r for r in LimitReason if r.money} == {LimitReason.DAILY_USD,
                                                   LimitReason.MONTHLY_USD}


def test_a_name_preferred_twice_counts_where_it_is_listed_last() -> None:
    text = POLICY.replace("prefer: [b]", "prefer: [b, a, b]")
    policy = parse_policy(text)
    assert [b.name for b in policy.rules[1].prefer] == ["a", "b"]
    soft = decide(request(), Profile(100, 10), TENANT, FleetSnapshot(), policy,
                  over_soft_limit=True)
    assert soft.primary.name == "a"
