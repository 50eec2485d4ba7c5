"""Step 1b of the request path: for backends whose policy lets them count a prompt
themselves (`tokens: {count: tokenize}`), ask those the estimate would turn away, at once
and in parallel (each in the API it serves), and add their answers to the profile."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Protocol

from gateway.policy.runtime import RequestPolicy
from gateway.policy.token_counting import engine_key, needs_engine_count
from gateway.translate.wire import routed_payload
from gateway.types import Backend, Endpoint, Payload, Profile, RouteRequest
from gateway.upstream import DispatchError


class EngineCounter(Protocol):
    async def count(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> int | None: ...


async def with_engine_counts(
    profile: Profile, request: RouteRequest, plan: RequestPolicy, counter: EngineCounter | None
) -> Profile:
    pool = plan.pool
    if counter is None or pool is None:
        return profile
    # The pool's backends only: a rule's spill_to or fallbacks outside it keep the estimate.
    asks = [b for b in pool.backends if needs_engine_count(b, profile)]
    if not asks:
        return profile  # the common case: no backend asks, or every estimate fits
    # Replicas of one deployment (same engine URL and model) are asked once.
    engines = {(b.tokenize_url, b.model): b for b in asks}
    answers = await asyncio.gather(*(_count(counter, b, request) for b in engines.values()))
    by_engine = dict(zip(engines, answers, strict=True))
    found = tuple(
        (engine_key(b), n) for b in asks
        if (n := by_engine[(b.tokenize_url, b.model)]) is not None
    )
    if not found:
        return profile
    return replace(profile, prompt_tokens_by_encoding=profile.prompt_tokens_by_encoding + found)


async def _count(counter: EngineCounter, backend: Backend, request: RouteRequest) -> int | None:
    try:
        endpoint, payload = routed_payload(backend, request.endpoint, request.payload,
                                           request.forms)
    except DispatchError:
        return None  # the completion itself will refuse it, with the reason
    return await counter.count(backend, endpoint, payload, request.request_id)
