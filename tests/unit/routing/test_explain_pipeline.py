"""Explain is the gateway's own decision: the live explainer and the routing service route
through one classify → count → decide (routing/pipeline.py), so over random requests, many
near a backend's context window (where the engines' own counts decide) and from tenants at a
soft budget limit (where a rule downgrades them), explain's answer is what the service does
with the same request next."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.budget.memory_store import MemoryBudgetStore
from gateway.budget.pricing import format_usd
from gateway.errors import GatewayError
from gateway.policy.loader import parse_policy
from gateway.routing.budgeting import BudgetGate
from gateway.routing.limits import LimitsResolver
from gateway.routing.live_explain import LiveExplainer
from gateway.routing.service import RoutingService
from gateway.telemetry.tracing import NoSpans, Spans, Tracing
from gateway.types import (
    Backend,
    Endpoint,
    Payload,
    Profile,
    RouteDecision,
    RouteRequest,
    TenantContext,
    TenantDetector,
)
from tests.unit.routing.service_fakes import (
    AuditList,
    FixedClassifier,
    FixedPolicy,
    RecordingFleet,
    ScriptedProvider,
)

# Two equal small engines (taking turns) that count a prompt themselves when the estimate
# (o200k × 1.25) says it does not fit their 2,048 tokens, and a wider, dearer one. A tenant
# past its soft limit is kept on the small ones.
POLICY = parse_policy("""\
version: 1
backends:
  - {name: near-a, provider: vllm, base_url: 'http://near-a/v1', model: m, context_window: 2048,
     tokens: {count: tokenize, ratio: 1.25}, price_per_mtok_usd: {input: 1, output: 2}}
  - {name: near-b, provider: vllm, base_url: 'http://near-b/v1', model: m, context_window: 2048,
     tokens: {count: tokenize, ratio: 1.25}, price_per_mtok_usd: {input: 1, output: 2}}
  - {name: wide, provider: vllm, base_url: 'http://wide/v1', model: m, context_window: 4096,
     price_per_mtok_usd: {input: 3, output: 6}}
models:
  chat: {backends: [near-a, near-b, wide], strategy: round_robin}
rules:
  - name: over-budget-stays-small
    when: {budget: [soft_limit]}
    backends: [near-a, near-b]
tenants:
  acme: {}
  thrifty: {budget: {daily_usd: 1, soft_limit: 0.001}}
""")
ACME = TenantContext("t-acme", "acme", "k1")
THRIFTY = TenantContext("t-thrifty", "thrifty", "k2")


def words(payload: Payload) -> int:
    return sum(len(str(m["content"]).split()) for m in payload["messages"])


def chat(prompt_words: int, max_tokens: int | None, request_id: str) -> RouteRequest:
    payload: dict[str, Any] = {"model": "chat",
                               "messages": [{"role": "user", "content": "w " * prompt_words}]}
    return RouteRequest(request_id, Endpoint.CHAT, "chat", payload,
                        max_output_tokens=max_tokens)


class WordClassifier(FixedClassifier):
    """Every word is one o200k token; nothing is sensitive."""

    async def profile(
        self, request: RouteRequest, thresholds: Sequence[int] = (), *,
        detectors: tuple[TenantDetector, ...] = (),
        other_encodings: Sequence[tuple[str, Sequence[int]]] = (),
        min_confidence: float = 0.0, **complexity: Any,
    ) -> Profile:
        return Profile(words(request.payload), request.max_output_tokens)


@dataclass
class ScaledEngine:
    """An engine whose tokenizer needs `ratio` tokens per o200k token."""

    ratio: float

    async def count(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                    request_id: str) -> int | None:
        return round(words(payload) * self.ratio)


class DecisionSpans(NoSpans):
    def __init__(self) -> None:
        self.decisions: list[RouteDecision] = []

    def decided(self, decision: RouteDecision) -> RouteDecision:
        self.decisions.append(decision)
        return decision


class RecordingTracing(Tracing):
    """Hands the service a recorder of each decision it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.spans = DecisionSpans()

    def begin(self, tenant: TenantContext, request: RouteRequest,
              headers: Mapping[str, str] | None) -> Spans:
        return self.spans


@dataclass
class Gateway:
    service: RoutingService
    explainer: LiveExplainer
    tracing: RecordingTracing
    audit: AuditList


def gateway(engine_ratio: float) -> Gateway:
    tracing, audit, classifier = RecordingTracing(), AuditList(), WordClassifier()
    policy = FixedPolicy(POLICY)
    service = RoutingService(
        policy=policy, classifier=classifier, fleet=RecordingFleet(),
        budget=BudgetGate(MemoryBudgetStore()), limits=LimitsResolver(None),
        providers={"vllm": ScriptedProvider()}, audit=audit, tracing=tracing,
        engine_counter=ScaledEngine(engine_ratio))
    return Gateway(service, LiveExplainer(classifier, policy, service.pipeline), tracing, audit)


async def prime(gw: Gateway, tenant: TenantContext) -> None:
    """One request whose worst case (1,000 output tokens at $2/M) reaches the soft limit."""
    await gw.service.handle(tenant, chat(1, 1000, "prime"))


async def explained_and_done(gw: Gateway, tenant: TenantContext,
                             request: RouteRequest) -> tuple[dict[str, Any], Any]:
    explained = await gw.explainer.explain(tenant, request)
    before = len(gw.tracing.spans.decisions)
    try:
        await gw.service.handle(tenant, request)
    except GatewayError as exc:
        if len(gw.tracing.spans.decisions) == before:  # refused at decide
            return explained, exc
    return explained, gw.tracing.spans.decisions[-1]


def assert_same(explained: dict[str, Any], done: Any) -> None:
    if isinstance(done, GatewayError):
        assert explained["outcome"] == "refused", explained
        assert (explained["error"]["status"], explained["error"]["code"]) == (
            done.status, done.to_dict()["error"]["code"])
        return
    assert explained["outcome"] == "routed", explained
    assert (explained["rule"], explained["primary"], explained["fallbacks"]) == (
        done.rule, done.primary.name, [b.name for b in done.fallbacks])
    assert explained["rejected"] == [{"backend": r.backend, "reason": r.reason}
                                     for r in done.rejected]
    assert explained["predicted"]["cost_usd"] == format_usd(done.predicted_cost_micro_usd)


@settings(max_examples=150, deadline=None)
@given(
    # Around 2,048 / 1.25 o200k tokens, where the estimate stops fitting the small engines,
    # and on past the wide one's 4,096.
    prompt_words=st.integers(1200, 1700) | st.integers(1, 3400),
    max_tokens=st.none() | st.integers(1, 900),
    engine_ratio=st.floats(0.8, 1.6),
    tenant=st.sampled_from([ACME, THRIFTY]),
    primed=st.booleans(),
)
@example(prompt_words=1500, max_tokens=200, engine_ratio=1.0, tenant=ACME, primed=False)
@example(prompt_words=1500, max_tokens=200, engine_ratio=1.0, tenant=THRIFTY, primed=True)
@example(prompt_words=1900, max_tokens=300, engine_ratio=1.0, tenant=THRIFTY, primed=True)
def test_explain_decides_what_the_gateway_then_does(
    prompt_words: int, max_tokens: int | None, engine_ratio: float, tenant: TenantContext,
    primed: bool,
) -> None:
    async def scenario() -> None:
        gw = gateway(engine_ratio)
        if primed:
            await prime(gw, tenant)
        request = chat(prompt_words, max_tokens, "asked")
        explained, done = await explained_and_done(gw, tenant, request)
        assert_same(explained, done)
        if not isinstance(done, GatewayError):  # a refused request records no route
            recorded = [e for e in gw.audit.events if e.request_id == "asked"]
            assert [e.over_soft_limit for e in recorded] == [explained["over_soft_limit"]]
        assert explained["over_soft_limit"] == (primed and tenant is THRIFTY)

    asyncio.run(scenario())


async def test_near_the_window_explain_reports_the_engines_count_and_its_route() -> None:
    gw = gateway(engine_ratio=1.0)
    # 1,500 × 1.25 + 200 = 2,075 estimated: over 2,048; the engines count 1,500 + 200.
    explained, done = await explained_and_done(gw, ACME, chat(1500, 200, "r"))
    assert_same(explained, done)
    assert explained["primary"] in ("near-a", "near-b")
    assert explained["profile"]["prompt_tokens_by_encoding"] == {
        "engine:near-a": 1500, "engine:near-b": 1500}


async def test_at_a_soft_limit_explain_takes_the_downgrading_rule_as_the_gateway_does() -> None:
    gw = gateway(engine_ratio=1.0)
    await prime(gw, THRIFTY)
    explained, done = await explained_and_done(gw, THRIFTY, chat(10, 10, "r"))
    assert_same(explained, done)
    assert explained["over_soft_limit"] is True
    assert explained["rule"] == "over-budget-stays-small"


async def test_explain_leaves_the_turn_to_the_next_request() -> None:
    gw = gateway(engine_ratio=1.0)
    turns = []
    for n in range(4):
        explained, done = await explained_and_done(gw, ACME, chat(10, 10, f"r{n}"))
        assert_same(explained, done)
        turns.append(explained["primary"])
    assert turns == ["near-a", "near-b", "wide", "near-a"]
