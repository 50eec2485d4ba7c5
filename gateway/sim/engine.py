"""SimEngine: runs the Scheduler in real time and streams each new token to its request.

One background task per app: schedule a step, sleep its model duration × time_scale, apply it,
hand the new tokens to the waiting requests, and record vLLM's metrics along the way.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.sim.config import SimConfig
from gateway.sim.metrics import SimMetrics
from gateway.sim.scheduler import Scheduler, StepPlan, TokenOutput, step_duration_s
from gateway.sim.scheduler import Sequence as EngineSeq

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TokenEvent:
    index: int  # 0-based position of the token in the answer
    finish_reason: str | None  # "stop" | "length" on the last token, "abort" if cut off


@dataclass(frozen=True)
class EngineUsage:
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class RequestHandle:
    """A submitted request as its HTTP handler sees it: a queue of token events."""

    def __init__(
        self, engine: SimEngine, seq: EngineSeq, max_tokens: int, arrival_s: float
    ) -> None:
        self._engine = engine
        self.seq = seq
        self.max_tokens = max_tokens
        self.arrival_s = arrival_s
        self.scheduled_s: float | None = None
        self.first_token_s: float | None = None
        self.last_token_s: float | None = None
        self.finish_reason: str | None = None
        self._events: asyncio.Queue[TokenEvent] = asyncio.Queue()

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    @property
    def usage(self) -> EngineUsage:
        return EngineUsage(
            prompt_tokens=len(self.seq.prompt_ids),
            cached_tokens=self.seq.num_cached_tokens,
            completion_tokens=self.seq.num_generated,
        )

    async def next_event(self) -> TokenEvent:
        return await self._events.get()

    async def wait_finished(self) -> str:
        """Wait for the last token; the finish reason ("stop", "length" or "abort")."""
        while True:
            event = await self._events.get()
            if event.finish_reason is not None:
                return event.finish_reason

    def abort(self) -> None:
        """Stop generating (client gone); a no-op once finished."""
        self._engine.abort(self)

    def _push(self, event: TokenEvent) -> None:
        if event.finish_reason is not None:
            self.finish_reason = event.finish_reason
        self._events.put_nowait(event)


class SimEngine:
    def __init__(
        self,
        config: SimConfig,
        metrics: SimMetrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.scheduler = Scheduler(config)
        self._metrics = metrics
        self._clock = clock
        self._ids = itertools.count()
        self._live: dict[int, RequestHandle] = {}
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        metrics.bind_load(
            running=lambda: len(self.scheduler.running),
            waiting=lambda: len(self.scheduler.waiting),
            kv_usage=lambda: self.scheduler.pool.usage,
        )

    @property
    def alive(self) -> bool:
        """False once the step loop has died: /health then answers 503, as vLLM's does."""
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"sim-engine-{self.config.model_name}")
        self._task.add_done_callback(self._on_loop_exit)

    def _on_loop_exit(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        # A crashed loop would leave every request hanging: end them, and say why.
        _log.error("sim engine loop crashed", exc_info=task.exception())
        for handle in list(self._live.values()):
            self.abort(handle)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])  # never raises: a crash was logged when it happened
            self._task = None
        for handle in list(self._live.values()):
            self.abort(handle)

    def submit(
        self,
        prompt_ids: Sequence[int],
        output_ids: Sequence[int],
        finish_reason: str,
        max_tokens: int,
    ) -> RequestHandle:
        """Queue a request whose whole answer is planned; its tokens arrive as steps run."""
        seq = EngineSeq(next(self._ids), tuple(prompt_ids), tuple(output_ids), finish_reason)
        self.scheduler.add(seq)
        handle = RequestHandle(self, seq, max_tokens, self._clock())
        self._live[seq.request_id] = handle
        self._wakeup.set()
        return handle

    def abort(self, handle: RequestHandle) -> None:
        if handle.done:
            return
        if self.scheduler.abort(handle.seq):
            self._metrics.count_finished("abort")
        self._live.pop(handle.seq.request_id, None)
        handle._push(TokenEvent(handle.seq.num_generated, "abort"))

    async def _run(self) -> None:
        scheduler = self.scheduler
        step_end_s = 0.0  # when the current step ends on the model's schedule
        while True:
            if not scheduler.has_work:
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            plan = scheduler.schedule()
            self._observe_plan(plan, self._clock())
            if plan.batch_size == 0:
                if not plan.preempted:
                    # Unreachable while requests fit the context (SimConfig guarantees that);
                    # wait for a change rather than spin.
                    self._wakeup.clear()
                    await self._wakeup.wait()
                continue
            # Sleep to a running deadline rather than for each step's duration: timers are
            # coarse (uvloop rounds to whole milliseconds), and a short step that wakes early
            # is paid back by the next sleep, so the average pace stays exact at any scale.
            duration_s = step_duration_s(self.config, plan) * self.config.time_scale
            step_end_s = max(step_end_s, self._clock()) + duration_s
            await asyncio.sleep(max(0.0, step_end_s - self._clock()))
            outputs = scheduler.complete(plan)
            self._metrics.iteration_tokens.observe(len(plan.decodes) + plan.num_prefill_tokens)
            self._deliver(outputs, self._clock())

    def _observe_plan(self, plan: StepPlan, now: float) -> None:
        metrics = self._metrics
        if plan.preempted:
            metrics.preemptions.inc(len(plan.preempted))
        for admission in plan.admissions:
            handle = self._live.get(admission.seq.request_id)
            if handle is None or not admission.first_time:
                continue
            handle.scheduled_s = now
            metrics.queue_time.observe(now - handle.arrival_s)
            metrics.prefix_queries.inc(len(admission.seq.prompt_ids))
            metrics.prefix_hits.inc(admission.num_cached_tokens)
            metrics.prompt_tokens_cached.inc(admission.num_cached_tokens)

    def _deliver(self, outputs: list[TokenOutput], now: float) -> None:
        metrics = self._metrics
        for output in outputs:
            handle = self._live.get(output.seq.request_id)
            if handle is None:
                continue
            metrics.generation_tokens.inc()
            if handle.first_token_s is None:
                handle.first_token_s = now
                metrics.ttft.observe(now - handle.arrival_s)
                metrics.prompt_tokens.inc(len(output.seq.prompt_ids))
                metrics.prefill_time.observe(now - (handle.scheduled_s or handle.arrival_s))
            elif handle.last_token_s is not None:
                metrics.itl.observe(now - handle.last_token_s)
            handle.last_token_s = now
            if output.finish_reason is not None:
                self._observe_finished(handle, output.finish_reason, now)
                del self._live[output.seq.request_id]
            handle._push(TokenEvent(output.index, output.finish_reason))

    def _observe_finished(self, handle: RequestHandle, reason: str, now: float) -> None:
        metrics = self._metrics
        first_token_s = handle.first_token_s or now
        generated = handle.seq.num_generated
        decode_s = now - first_token_s
        metrics.e2e.observe(now - handle.arrival_s)
        metrics.decode_time.observe(decode_s)
        metrics.inference_time.observe(now - (handle.scheduled_s or handle.arrival_s))
        if generated > 1:
            metrics.tpot.observe(decode_s / (generated - 1))
        metrics.request_prompt_tokens.observe(len(handle.seq.prompt_ids))
        metrics.request_generation_tokens.observe(generated)
        metrics.request_max_tokens.observe(handle.max_tokens)
        metrics.count_finished(reason)
