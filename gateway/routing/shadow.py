"""Shadow judging: for a sampled share of the requests a cheaper backend served, the same
request goes later to the policy's strong backend and a judge backend scores both answers
(shadow_rubric.py); the judgement is stored like feedback (request_outcomes).

Off the request path: `offer()` is the one call the routing service makes as a request
finishes. It does a few comparisons and puts a job in a bounded queue, or counts it dropped
when the queue is full; it never waits and never touches the response. One worker task drains
the queue. Before each judgement it reads today's shadow spend from the database (one budget
for the gateway, shared by its processes) and stops once `shadow.daily_usd` is spent; a
judgement in flight may pass the cap by its own cost. A backend the policy would not allow
for the request (shadow_guard.py) is never sent it: the job is skipped and counted.

Each call is accounted by the fleet as a served attempt is (failover.py's FleetAttempt): in
flight while it runs, and its success or failure counted by the backend's circuit breaker,
so routing sees the load shadow judging puts on the strong and judge backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime, time
from typing import Protocol

from gateway.budget.pricing import cost_micro_usd
from gateway.classify.tokens import count_text
from gateway.outcomes.repository import Judgement
from gateway.policy.loader import PolicySet
from gateway.routing.failover import FleetAttempt
from gateway.routing.seams import FleetTracker
from gateway.routing.shadow_guard import may_receive
from gateway.routing.shadow_rubric import (
    VerdictError,
    answer_text,
    judge_payload,
    parse_verdict,
    question_text,
    strong_first,
)
from gateway.routing.trace import Finished
from gateway.translate.wire import routed_payload
from gateway.types import Backend, Endpoint, Payload, Profile, WireForms
from gateway.upstream import DispatchError, Provider

log = logging.getLogger("gateway.shadow")

QUEUE_SIZE = 256
DROP_LOG_EVERY = 1000  # the first drop is logged, then every this many
CALL_TIMEOUT_S = 120.0
# Keys of the client's request that do not carry over to a shadow call (it never streams).
DROPPED_KEYS = ("stream", "stream_options")


class OutcomeSink(Protocol):
    async def shadow_spend_micro_usd(self, since: datetime) -> int: ...

    async def save_judgement(self, judgement: Judgement) -> None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class ShadowJob:
    tenant_id: str
    request_id: str
    policy: PolicySet  # the one in force when the request finished
    payload: Payload
    served: Backend
    rule: str | None
    sensitive: bool
    redacted: bool
    body: bytes | None  # what the client got (None for a stream)
    profile: Profile  # the request's: what the fleet counts of a call that resends it
    forms: WireForms | None = None  # what its front door kept out of `payload` (a Claude's)


@dataclasses.dataclass(slots=True)
class ShadowStats:
    queued: int = 0
    dropped_queue_full: int = 0
    skipped_not_allowed: int = 0  # a backend the policy would not allow for the request
    skipped_budget: int = 0
    judged: int = 0
    failed: int = 0  # a call or the verdict failed (its cost still counts)


class ShadowJudge:
    def __init__(self, providers: Mapping[str, Provider], fleet: FleetTracker,
                 outcomes: OutcomeSink, *, queue_size: int = QUEUE_SIZE,
                 call_timeout_s: float = CALL_TIMEOUT_S) -> None:
        self._providers = providers
        self._fleet = fleet
        self._outcomes = outcomes
        self._queue: asyncio.Queue[ShadowJob] = asyncio.Queue(queue_size)
        self._call_timeout_s = call_timeout_s
        self._task: asyncio.Task[None] | None = None
        self.stats = ShadowStats()

    def offer(self, finished: Finished) -> None:
        """The request-path hook: cheap, never blocks, never raises for a full queue. Judged
        under the policy the request was routed by, not whatever is loaded by then."""
        arrival = finished.arrival
        tenant, request, profile = arrival.tenant, arrival.request, finished.profile
        policy = arrival.plan.policy
        spec, served = policy.shadow, finished.attempts.backend
        decision = finished.route.decision if finished.route is not None else None
        if spec is None or served is None or decision is None or not spec.sample:
            return
        strong = spec.strong
        # Chat answers only: a Responses client's reply may come in its own API.
        native = request.forms is not None and request.forms.native is not None
        if (request.endpoint is not Endpoint.CHAT or native
                or served.quality_tier >= strong.quality_tier or served.name == strong.name):
            return
        if zlib.crc32(request.request_id.encode()) >= spec.sample * 2**32:
            return  # request ids are random: a fair sample, and the same answer every time
        job = ShadowJob(tenant.tenant_id, request.request_id, policy, request.payload, served,
                        decision.rule, bool(profile.sensitivity or profile.spans),
                        decision.redact, finished.body, profile, request.forms)
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            self.stats.dropped_queue_full += 1
            if self.stats.dropped_queue_full % DROP_LOG_EVERY == 1:
                log.warning("shadow judging queue full (%d jobs): %d dropped so far",
                            self._queue.maxsize, self.stats.dropped_queue_full)
            return
        self.stats.queued += 1

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="shadow-judge")

    async def stop(self) -> None:
        """Jobs still queued are dropped (a judgement is a sample, not a record)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def drained(self) -> None:
        """Wait until every queued job has been handled (tests, shutdown)."""
        await self._queue.join()

    def numbers(self) -> dict[str, int]:
        return {**dataclasses.asdict(self.stats), "queue": self._queue.qsize()}

    async def _run(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await self.judge(job)
            except Exception:  # one bad judgement must not end shadow judging
                self.stats.failed += 1
                log.exception("shadow judgement of request %s failed", job.request_id)
            finally:
                self._queue.task_done()

    async def judge(self, job: ShadowJob) -> None:
        spec = job.policy.shadow
        assert spec is not None
        strong, judge = spec.strong, spec.judge
        # No answer text in what the client got (a stream, or another wire format): the
        # served backend is asked again, under the same rules as the others.
        served_answer = answer_text(job.body) if job.body is not None else ""
        needed = [strong, judge, *([] if served_answer else [job.served])]
        if not all(may_receive(job.policy, job.rule, job.sensitive, job.redacted, b)
                   for b in needed):
            self.stats.skipped_not_allowed += 1
            return
        today = datetime.combine(datetime.now(UTC).date(), time(), UTC)
        if await self._outcomes.shadow_spend_micro_usd(today) >= round(spec.daily_usd * 1e6):
            self.stats.skipped_budget += 1
            return
        payload = {k: v for k, v in job.payload.items() if k not in DROPPED_KEYS}
        cost = 0
        scores: tuple[float, float] | None = None
        try:
            if not served_answer:
                served_body, spent = await self._ask(job.served, payload, job.profile,
                                                     job.request_id, job.forms)
                cost += spent
                served_answer = answer_text(served_body)
            strong_body, spent = await self._ask(strong, payload, job.profile, job.request_id,
                                                 job.forms)
            cost += spent
            strong_answer = answer_text(strong_body)
            flip = strong_first(job.request_id)
            first, second = (strong_answer, served_answer) if flip else (
                served_answer, strong_answer)
            verdict = judge_payload(question_text(payload), first, second)
            verdict_body, spent = await self._ask(judge, verdict, verdict_profile(verdict),
                                                  job.request_id)
            cost += spent
            a, b = parse_verdict(verdict_body)
            scores = (b, a) if flip else (a, b)
        except (DispatchError, VerdictError, TimeoutError) as exc:
            self.stats.failed += 1
            log.warning("shadow judgement of request %s failed: %s", job.request_id, exc)
        await self._outcomes.save_judgement(Judgement(
            job.request_id, job.tenant_id, job.served.name, strong.name, judge.name,
            scores[0] if scores else None, scores[1] if scores else None, cost))
        if scores is not None:
            self.stats.judged += 1

    async def _ask(self, backend: Backend, payload: Payload, profile: Profile,
                   request_id: str, forms: WireForms | None = None) -> tuple[bytes, int]:
        """A chat payload's whole answer from `backend`, in the API it serves (a chat
        reply), accounted by the fleet as a served request's is: `profile`'s prompt in flight
        on the backend while the call runs, then its verdict."""
        api, sent = routed_payload(backend, Endpoint.CHAT, payload, forms)
        provider = self._providers[backend.provider]
        with FleetAttempt(self._fleet, backend, profile) as ticket:
            async with asyncio.timeout(self._call_timeout_s):
                reply = await provider.complete(backend, api, sent, f"shadow-{request_id}")
        self._fleet.succeeded(ticket, None, None)  # a whole reply has no TTFT
        return reply.body, cost_micro_usd(reply.usage, backend.price) if reply.usage else 0


def verdict_profile(payload: Payload) -> Profile:
    """The judge's prompt (rubric and both answers), counted off the request path for the
    fleet's queue and KV accounting."""
    texts = [m["content"] for m in payload["messages"] if isinstance(m["content"], str)]
    return Profile(sum(count_text(t) for t in texts), payload.get("max_tokens"))
