"""Shadow judging's calls go through the fleet's accounting as served attempts do
(failover.py's FleetAttempt): in flight on their backend while they run, released when they
answer, and their failures counted by its circuit breaker."""

from __future__ import annotations

import asyncio
from datetime import datetime

import orjson

from gateway.errors import UpstreamFailed
from gateway.outcomes.repository import Judgement
from gateway.routing.shadow import ShadowJob, ShadowJudge
from gateway.scraper.fleet import FleetState
from gateway.types import Backend, Circuit, Endpoint, Payload, Profile, Usage
from gateway.upstream import DispatchError, UpstreamReply, UpstreamStream
from tests.support.shadow_requests import shadow_policy

VERDICT = '{"a": 4, "b": 9}'


def completion(text: str) -> bytes:
    return orjson.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]})


class Outcomes:
    def __init__(self) -> None:
        self.saved: list[Judgement] = []

    async def shadow_spend_micro_usd(self, since: datetime) -> int:
        return 0

    async def save_judgement(self, judgement: Judgement) -> None:
        self.saved.append(judgement)


class GatedProvider:
    """Answers each call once the test lets it (`gate`), recording who was asked."""

    def __init__(self, *, fail: bool = False) -> None:
        self.gate = asyncio.Event()
        self.called = asyncio.Event()
        self.asked: list[str] = []
        self.fail = fail

    async def complete(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                       request_id: str) -> UpstreamReply:
        self.asked.append(backend.name)
        self.called.set()
        await self.gate.wait()
        if self.fail:
            raise DispatchError(UpstreamFailed("busy"), retryable=True, upstream_status=503)
        text = VERDICT if "<answer_a>" in str(payload["messages"]) else "the strong answer"
        return UpstreamReply(completion(text), Usage(10, 5))

    async def stream(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                     request_id: str) -> UpstreamStream:
        raise AssertionError("shadow judging never streams")

    async def aclose(self) -> None:
        pass


def job(request_id: str = "r1") -> ShadowJob:
    policy = shadow_policy("1.0")
    return ShadowJob("t1", request_id, policy, {"messages": [{"role": "user", "content": "q"}]},
                     policy.backends["small"], "default", False, False,
                     completion("the cheap answer"), Profile(700, 50))


async def test_a_shadow_call_is_in_flight_on_its_backend_until_it_answers() -> None:
    fleet, provider, outcomes = FleetState(), GatedProvider(), Outcomes()
    shadow = ShadowJudge({"vllm": provider}, fleet, outcomes)
    judging = asyncio.create_task(shadow.judge(job()))
    await provider.called.wait()
    big = fleet.snapshot().backends["big"]
    assert big.in_flight == 1  # the strong backend's answer, counted as a served call is
    assert big.queued_prefill_tokens == 700  # the client's prompt, from its profile
    provider.gate.set()
    await judging
    assert provider.asked == ["big", "big"]  # the strong answer, then the verdict
    assert fleet.snapshot().backends["big"].in_flight == 0
    assert fleet.details()["big"]["state"].circuit is Circuit.CLOSED
    [saved] = outcomes.saved
    assert sorted((saved.weak_score, saved.strong_score)) == [0.4, 0.9]  # a judgement


async def test_failed_shadow_calls_count_against_the_backends_circuit() -> None:
    fleet, provider, outcomes = FleetState(), GatedProvider(fail=True), Outcomes()
    provider.gate.set()
    shadow = ShadowJudge({"vllm": provider}, fleet, outcomes)
    for n in range(3):  # BreakerConfig.failures_to_open
        await shadow.judge(job(f"r{n}"))
    state = fleet.snapshot().backends["big"]
    assert state.circuit is Circuit.OPEN and state.in_flight == 0
    assert shadow.numbers()["failed"] == 3
