"""The request-path hook of shadow judging: a few comparisons and a bounded queue that drops
(and counts) instead of waiting; only cheaper backends' chat answers are sampled."""

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
  - {name: small, provider: vllm, base_url: "http://s:1/v1", model: m, context_window: 100}
  - {name: big, provider: vllm, base_url: "http://b:1/v1", model: m, context_window: 100,
     quality_tier: 4}
models: {auto: [small, big]}
shadow: {sample: SAMPLE, strong: big, judge: big, daily_usd: 1}
"""
TENANT = TenantContext("t1", "acme", "k1")


class NoOutcomes:
    async def shadow_spend_micro_usd(self, since: datetime) -> int:
        raise AssertionError("the worker is not started in these tests")

    async def save_judgement(self, judgement: Judgement) -> None:
        raise AssertionError("the worker is not started in these tests")


def judge(sample: str = "1.0", queue_size: int = 2) -> tuple[ShadowJudge, PolicySet]:
    policy = parse_policy(POLICY.replace("SAMPLE", sample))
    return ShadowJudge({}, FleetState(), NoOutcomes(), queue_size=queue_size), policy


def offer(shadow: ShadowJudge, policy: PolicySet, served: str, request_id: str = "r1",
          endpoint: Endpoint = Endpoint.CHAT) -> None:
    backend = policy.backends[served]
    request = RouteRequest(request_id, endpoint, "auto", {"messages": []})
    arrival = Arrival(TENANT, request, policy.for_request(TENANT, request), 0.0)
    route = Route(RouteDecision(backend, (), "default"), FleetSnapshot())
    shadow.offer(Finished(arrival, Profile(10, None), route, None,
                          Attempts(backend=backend), Usage(), body=b"{}"))


def test_a_full_queue_drops_and_counts_without_waiting() -> None:
    shadow, policy = judge(queue_size=2)
    for n in range(5):
        offer(shadow, policy, "small", f"r{n}")
    assert shadow.numbers()["queued"] == 2
    assert shadow.numbers()["dropped_queue_full"] == 3
    assert shadow.numbers()["queue"] == 2


def test_only_cheaper_backends_chat_answers_are_offered() -> None:
    shadow, policy = judge()
    offer(shadow, policy, "big")
    offer(shadow, policy, "small", endpoint=Endpoint.EMBEDDINGS)
    assert shadow.numbers()["queued"] == 0
    offer(shadow, policy, "small")
    assert shadow.numbers()["queued"] == 1


def test_the_sample_is_a_share_of_request_ids() -> None:
    shadow, policy = judge(sample="0.25", queue_size=10_000)
    for n in range(4000):
        offer(shadow, policy, "small", f"req-{n}")
    assert 800 < shadow.numbers()["queued"] < 1200
    none, policy = judge(sample="0")
    offer(none, policy, "small")
    assert none.numbers()["queued"] == 0
