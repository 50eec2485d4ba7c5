"""SimRuntime: the long-lived objects of one sim app, built by its lifespan.

Handlers reach it through the request (lifespan state), never through a module global, so
several sims can run in one process.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

from starlette.requests import Request
from starlette.types import Scope

from gateway.sim.config import SimConfig
from gateway.sim.engine import SimEngine
from gateway.sim.faults import SimFaults
from gateway.sim.metrics import SimMetrics
from gateway.sim.payloads import ResponseMeta
from gateway.sim.recorder import RequestRecorder
from gateway.sim.tokenizer import SimTokenizer

STATE_KEY = "sim"


@dataclass
class SimRuntime:
    config: SimConfig
    tokenizer: SimTokenizer
    metrics: SimMetrics
    engine: SimEngine
    faults: SimFaults
    recorder: RequestRecorder
    created: int  # unix seconds the sim started; /v1/models reports it

    @classmethod
    def build(cls, config: SimConfig) -> SimRuntime:
        metrics = SimMetrics(config)
        return cls(
            config=config,
            tokenizer=SimTokenizer(config.vocab_size),
            metrics=metrics,
            engine=SimEngine(config, metrics),
            faults=SimFaults(),
            recorder=RequestRecorder(),
            created=int(time.time()),
        )

    async def api_delay(self) -> None:
        """A commercial API's network and queueing time (none for a vLLM)."""
        delay = self.config.response_delay_s * self.config.time_scale
        if delay > 0:
            await asyncio.sleep(delay)

    def response_meta(self, request: Request, prefix: str) -> ResponseMeta:
        """Ids like vLLM's: "<prefix>-<X-Request-Id>" when the caller sent one, else random."""
        base = request.headers.get("x-request-id") or uuid.uuid4().hex
        return ResponseMeta(f"{prefix}-{base}", int(time.time()), self.config.model_name)


def runtime_in_scope(scope: Scope) -> SimRuntime:
    runtime = scope.get("state", {}).get(STATE_KEY)
    if not isinstance(runtime, SimRuntime):
        raise RuntimeError("the sim app must run under a server that runs its lifespan")
    return runtime


def runtime_of(request: Request) -> SimRuntime:
    return runtime_in_scope(request.scope)
