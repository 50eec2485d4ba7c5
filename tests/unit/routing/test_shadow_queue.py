"""The request-path hook of shadow judging: a few comparisons and a bounded queue that drops
(and counts) instead of waiting; only cheaper backends' chat answers are sampled."""

from __future__ import annotations

from gateway.policy.loader import PolicySet
from gateway.routing.shadow import ShadowJudge
from gateway.types import Endpoint
from tests.support.shadow_requests import finished, shadow_judge, shadow_policy


def judge(sample: str = "1.0", queue_size: int = 2) -> tuple[ShadowJudge, PolicySet]:
    return shadow_judge(queue_size), shadow_policy(sample)


def offer(shadow: ShadowJudge, policy: PolicySet, served: str, request_id: str = "r1",
          endpoint: Endpoint = Endpoint.CHAT) -> None:
    shadow.offer(finished(policy, served, request_id, endpoint))


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
