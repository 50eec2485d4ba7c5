"""The policy's runtime form: tenants compiled once at load (enums, limits in the budget
store's terms) and one RequestPolicy per kind of request, carrying all a request needs."""

from __future__ import annotations

import pytest

from gateway.errors import PermissionDenied
from gateway.policy.engine import decide_for
from gateway.policy.loader import parse_policy
from gateway.policy.tenants import BudgetStoreFailure, StoreContent
from gateway.routing.limits import LimitsResolver
from gateway.types import (
    BudgetLimits,
    Endpoint,
    FleetSnapshot,
    Profile,
    RateLimits,
    RouteRequest,
    ScopeLimits,
    TenantContext,
)

POLICY = """\
version: 1
backends:
  - {name: small, provider: vllm, base_url: 'http://a/v1', model: m, context_window: 4096}
  - {name: big, provider: vllm, base_url: 'http://b/v1', model: m, context_window: 32768}
models:
  chat: [small, big]
  other: [big]
sensitivity:
  min_confidence: 0.6
  allow: [{name: public, values: [info@example.org]}]
rules:
  - {name: team-rule, when: {tags: [team-a]}, prefer: [big]}
tenants:
  acme:
    models: [chat]
    store_content: redacted
    on_budget_store_error: fail_closed
    budget: {daily_usd: 1.5, soft_limit: 0.5}
    limits: {rpm: 60}
    per_key: {limits: {concurrent: 2}}
    tags:
      team-a: {budget: {monthly_tokens: 1000}}
      known-only: {}
    min_confidence: 0.9
  plain: {}
"""
POLICY_SET = parse_policy(POLICY)
ACME = TenantContext("t1", "acme", "k1")
STRANGER = TenantContext("t2", "stranger", "k2")


def request(model: str = "chat", max_tokens: int | None = 100,
            tags: tuple[str, ...] = ()) -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, model, {"messages": []},
                        max_output_tokens=max_tokens, tags=tags)


def test_a_tenant_compiles_to_enums_and_limits_in_micro_usd() -> None:
    acme = POLICY_SET.tenant("acme")
    assert acme.store_content is StoreContent.REDACTED and acme.captures_content
    assert acme.on_budget_store_error is BudgetStoreFailure.FAIL_CLOSED
    assert acme.tenant_limits == ScopeLimits(
        "tenant", BudgetLimits(daily_micro_usd=1_500_000, soft_fraction=0.5), RateLimits(rpm=60))
    assert (acme.key_budget, acme.key_rate) == (None, RateLimits(concurrent=2))
    assert dict(acme.tag_limits) == {
        "team-a": ScopeLimits("tag:team-a", BudgetLimits(monthly_tokens=1000))}
    assert acme.known_tags == {"team-a", "known-only"} and acme.limited
    assert acme.models == {"chat"} and acme.min_confidence == 0.9
    assert [d.name for d in acme.detectors] == ["public"]


def test_a_tenant_the_policy_does_not_name_gets_the_policys_defaults() -> None:
    stranger = POLICY_SET.tenant("stranger")
    assert stranger is POLICY_SET.default_tenant
    assert stranger.store_content is StoreContent.NONE and not stranger.captures_content
    assert stranger.on_budget_store_error is BudgetStoreFailure.FAIL_OPEN
    assert not stranger.limited and stranger.tenant_limits == ScopeLimits("tenant")
    assert stranger.min_confidence == 0.6 and [d.name for d in stranger.detectors] == ["public"]
    assert not POLICY_SET.tenant("plain").limited


def test_one_request_policy_per_kind_of_request_holds_everything_it_needs() -> None:
    plan = POLICY_SET.for_request(ACME, request(tags=("team-a",)))
    assert POLICY_SET.for_request(ACME, request(tags=("team-a",))) is plan  # computed once
    assert plan.policy is POLICY_SET and plan.tenant is POLICY_SET.tenant("acme")
    assert plan.model_allowed and plan.known_model
    assert plan.pool is not None and [b.name for b in plan.pool.backends] == ["small", "big"]
    assert [r.name for r in plan.rules] == ["team-rule"]
    assert plan.token_thresholds == POLICY_SET.token_thresholds("chat", 100)
    assert len(plan.token_thresholds) == 2
    untagged = POLICY_SET.for_request(ACME, request())
    assert untagged.rules == () and untagged is not plan
    longer = POLICY_SET.for_request(ACME, request(max_tokens=1000))
    # Room for 900 more output tokens is 900 fewer prompt tokens (at the estimate's ratio).
    assert all(long < short for long, short in zip(
        longer.token_thresholds, plan.token_thresholds, strict=True))


def test_a_model_the_tenant_may_not_use_is_refused_by_the_decision() -> None:
    plan = POLICY_SET.for_request(ACME, request("other"))
    assert not plan.model_allowed
    with pytest.raises(PermissionDenied, match="may not use model 'other'"):
        decide_for(plan, request("other"), Profile(10, 100), FleetSnapshot())
    assert POLICY_SET.for_request(STRANGER, request("other")).model_allowed
    unknown = POLICY_SET.for_request(STRANGER, request("nope"))
    assert unknown.pool is None and not unknown.known_model


async def test_scopes_come_from_the_compiled_tenant_and_overrides_replace_them() -> None:
    async def overrides(tenant_id: str) -> dict[str, tuple[dict[str, object] | None,
                                                         dict[str, object] | None]]:
        # The admin lifted the tenant's own limits and set the key's.
        return {"tenant": (None, None), "key:k1": ({"daily_usd": 2}, None)}

    acme = POLICY_SET.tenant("acme")
    plain = await LimitsResolver(None).scopes_for(acme, ACME, ("team-a", "team-a", "x"))
    assert plain == (
        acme.tenant_limits, ScopeLimits("key:k1", None, RateLimits(concurrent=2)),
        acme.tag_limits["team-a"])
    overridden = await LimitsResolver(overrides).scopes_for(acme, ACME, ())
    assert overridden == (
        ScopeLimits("tenant"), ScopeLimits("key:k1", BudgetLimits(daily_micro_usd=2_000_000)))
    assert await LimitsResolver(None).scopes_for(
        POLICY_SET.tenant("stranger"), STRANGER, ("team-a",)) == (ScopeLimits("tenant"),)
