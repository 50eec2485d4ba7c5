"""Finished requests for shadow judging's request-path hook, as the routing service hands
them over: one two-backend policy (a cheap `small`, a strong `big`), with or without a
`shadow:` block, and a judge whose outcome store must never be reached (the worker is not
started). Shared by the hook's unit tests, its accounting tests and its benchmark."""

from __future__ import annotations

from datetime import datetime

from gateway.outcomes.repository import Judgement
from gateway.policy.loader import PolicySet, parse_policy
from gateway.routing.shadow import ShadowJudge
from gateway.routing.trace import Arrival, Attempts, Finished, Route
from gateway.scraper.fleet import FleetState
from gateway.types import (
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteDecision,
    RouteRequest,
    TenantContext,
    Usage,
)

POLICY = """version: 1
backends:
  - {name: small, provider: vllm, base_url: "http://s:1/v1", model: m, context_window: 4096}
  - {name: big, provider: vllm, base_url: "http://b:1/v1", model: m, context_window: 4096,
     quality_tier: 4}
models: {auto: [small, big]}
"""
TENANT = TenantContext("t1", "acme", "k1")


class UnusedOutcomes:
    async def shadow_spend_micro_usd(self, since: datetime) -> int:
        raise AssertionError("the shadow worker is not started here")

    async def save_judgement(self, judgement: Judgement) -> None:
        raise AssertionError("the shadow worker is not started here")


def shadow_policy(sample: str | None) -> PolicySet:
    """The policy, sampling `sample` of requests for judging; None: no `shadow:` block."""
    shadow = "" if sample is None else (
        f"shadow: {{sample: {sample}, strong: big, judge: big, daily_usd: 1}}\n")
    return parse_policy(POLICY + shadow)


def shadow_judge(queue_size: int) -> ShadowJudge:
    return ShadowJudge({}, FleetState(), UnusedOutcomes(), queue_size=queue_size)


def finished(policy: PolicySet, served: str, request_id: str,
             endpoint: Endpoint = Endpoint.CHAT) -> Finished:
    """What the request path hands the hook when a request ends on backend `served`."""
    backend = policy.backends[served]
    request = RouteRequest(request_id, endpoint, "auto", {"messages": []})
    arrival = Arrival(TENANT, request, policy.for_request(TENANT, request), 0.0)
    route = Route(RouteDecision(backend, (), "default"), FleetSnapshot())
    return Finished(arrival, Profile(10, None), route, None, Attempts(backend=backend),
                    Usage(), body=b"{}")
