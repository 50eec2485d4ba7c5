"""The routing service on in-memory seams (service_fakes.py): its steps in order, the one
failover loop for whole replies and streams, what is settled and recorded however a request
ends, and aclose() draining stream ends."""

from __future__ import annotations

import asyncio
import time

import pytest

from gateway.audit.records import event_row
from gateway.budget.limits import ScopeUsage, periods
from gateway.budget.store import BudgetStore
from gateway.errors import InvalidRequest, QuotaExceeded, UpstreamFailed
from gateway.policy.loader import parse_policy
from gateway.routing.service import Completed, Streaming
from gateway.routing.streaming import DONE
from gateway.upstream import DispatchError
from tests.unit.routing.service_fakes import (
    ACME,
    CAPPED,
    POLICY,
    GatedSettle,
    ScriptedProvider,
    harness,
    request,
)

# 100 prompt tokens at 1 micro-USD and 20 output tokens at 2: what a whole reply costs.
REPLY_COST = 140
STREAM_COST = 106  # 100 prompt tokens, 3 output tokens (the stream's usage chunk)


async def tenant_usage(store: BudgetStore, tenant_id: str) -> ScopeUsage:
    day, month = periods(time.time())
    return await store.usage(tenant_id, "tenant", day, month)


async def drain(streaming: Streaming) -> list[bytes]:
    return [piece async for piece in streaming.body]


def unavailable(backend: str) -> DispatchError:
    return DispatchError(UpstreamFailed(f"{backend} answered 503"), retryable=True,
                         upstream_status=503)


async def test_a_whole_reply_is_routed_settled_and_recorded_once() -> None:
    h = harness()
    result = await h.service.handle(ACME, request())
    assert isinstance(result, Completed)
    assert result.body.startswith(b'{"choices"')
    assert result.headers["x-gateway-backend"] == "a"
    assert result.headers["x-gateway-attempts"] == "1"
    assert result.headers["x-gateway-cost-usd"] == "0.000140"
    assert h.provider.calls == ["a"]
    assert h.fleet.events == [("dispatched", "a"), ("succeeded", "a")]
    [event] = h.audit.events
    assert (event.status, event.outcome, event.backend, event.attempts) == (200, "ok", "a", 1)
    assert (event.cost_micro_usd, event.prompt_tokens, event.completion_tokens) == (
        REPLY_COST, 100, 20)
    assert event.tried == ("a",) and event.rule == "model-pool"
    used = await tenant_usage(h.store, ACME.tenant_id)
    assert (used.spent_day_micro_usd, used.reserved_micro_usd) == (REPLY_COST, 0)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_a_retryable_failure_before_the_first_byte_fails_over_to_the_next(
    stream: bool,
) -> None:
    h = harness(ScriptedProvider(fail={"a": unavailable("a")}))
    result = await h.service.handle(ACME, request(stream=stream))
    if isinstance(result, Streaming):
        await drain(result)
    assert result.headers["x-gateway-backend"] == "b"
    assert result.headers["x-gateway-attempts"] == "2"
    assert h.provider.calls == ["a", "b"]
    assert h.fleet.events[:3] == [("dispatched", "a"), ("failed", "a"), ("dispatched", "b")]
    assert h.fleet.events[-1] == ("succeeded", "b")
    [event] = h.audit.events
    assert (event.outcome, event.backend, event.attempts, event.tried) == (
        "ok", "b", 2, ("a", "b"))
    assert event.failures == ("a: HTTP 503",)
    assert event_row(event)["trace"]["failed"] == ["a: HTTP 503"]


async def test_every_attempt_tells_the_fleet_the_requests_prefix_key() -> None:
    """The fleet discounts a cached prefix only for a request whose key it saw go there."""
    h = harness(ScriptedProvider(fail={"a": unavailable("a")}))
    await h.service.handle(ACME, request(session_id="chat-7"))
    await h.service.handle(ACME, request())
    assert h.fleet.prefix_keys == [b"s:chat-7", b"s:chat-7", None, None]


async def test_when_every_candidate_fails_the_last_error_is_the_clients() -> None:
    h = harness(ScriptedProvider(fail={"a": unavailable("a"), "b": unavailable("b")}))
    with pytest.raises(UpstreamFailed, match="b answered 503"):
        await h.service.handle(ACME, request())
    [event] = h.audit.events
    assert (event.status, event.outcome, event.tried) == (502, "error", ("a", "b"))
    assert (await tenant_usage(h.store, ACME.tenant_id)).reserved_micro_usd == 0


async def test_a_non_retryable_error_ends_the_request_without_trying_the_fallback() -> None:
    refused = DispatchError(InvalidRequest("the upstream refused the request"), retryable=False,
                            upstream_status=400)
    h = harness(ScriptedProvider(fail={"a": refused}))
    with pytest.raises(InvalidRequest, match="refused the request"):
        await h.service.handle(ACME, request())
    assert h.provider.calls == ["a"]
    # The request's fault, not the backend's: no verdict on its health.
    assert h.fleet.events == [("dispatched", "a"), ("abandoned", "a")]
    [event] = h.audit.events
    assert (event.status, event.outcome, event.error_type, event.backend, event.attempts) == (
        400, "error", "invalid_request_error", "a", 1)
    assert event.cost_micro_usd == 0
    used = await tenant_usage(h.store, ACME.tenant_id)
    assert (used.spent_day_micro_usd, used.reserved_micro_usd) == (0, 0)


async def test_a_request_over_its_budget_is_refused_before_any_backend_is_called() -> None:
    h = harness()
    with pytest.raises(QuotaExceeded, match="daily token budget"):
        await h.service.handle(CAPPED, request())
    assert h.provider.calls == [] and h.fleet.events == []
    # Held on its primary while its budget was checked, and let go when it was refused.
    assert h.fleet.holds == [("hold", "a"), ("unhold", "a")]
    [event] = h.audit.events
    assert (event.status, event.error_type, event.backend, event.rule) == (
        429, "insufficient_quota", None, "model-pool")


async def test_a_stream_is_relayed_then_settled_and_recorded_from_its_usage_chunk() -> None:
    h = harness()
    result = await h.service.handle(ACME, request(stream=True))
    assert isinstance(result, Streaming)
    assert result.headers["x-gateway-backend"] == "a"
    assert "x-gateway-cost-usd" not in result.headers  # not known until the stream ends
    assert h.audit.events == []
    pieces = await drain(result)
    assert pieces[0] == b"data: " + b'{"choices":[{"index":0,"delta":{"content":"he"}}]}' + b"\n\n"
    assert pieces[-1] == DONE and len(pieces) == 4  # the usage chunk was ours, not the client's
    assert h.fleet.events == [("dispatched", "a"), ("first_token", "a"), ("succeeded", "a")]
    assert h.fleet.holds == [("hold", "a"), ("unhold", "a")]  # released as it was dispatched
    assert h.provider.streams[0].closed
    [event] = h.audit.events
    assert (event.outcome, event.stream, event.completion_tokens, event.cost_micro_usd) == (
        "ok", True, 3, STREAM_COST)
    assert event.ttft_s is not None and event.ttft_s >= 0
    used = await tenant_usage(h.store, ACME.tenant_id)
    assert (used.spent_day_micro_usd, used.reserved_micro_usd) == (STREAM_COST, 0)


async def test_a_client_that_leaves_during_dispatch_is_recorded_and_its_budget_released() -> None:
    h = harness(ScriptedProvider(hang=frozenset({"a"})))
    handling = asyncio.create_task(h.service.handle(ACME, request()))
    await h.provider.entered.wait()
    handling.cancel()
    with pytest.raises(asyncio.CancelledError):
        await handling
    assert h.fleet.events == [("dispatched", "a"), ("abandoned", "a")]
    [event] = h.audit.events
    assert (event.status, event.outcome, event.backend, event.attempts) == (
        499, "client_disconnected", "a", 1)
    used = await tenant_usage(h.store, ACME.tenant_id)
    assert (used.spent_day_micro_usd, used.reserved_micro_usd) == (0, 0)


async def test_a_client_that_leaves_mid_stream_closes_the_upstream_and_is_settled() -> None:
    hold = asyncio.Event()  # the rest of the stream never comes
    h = harness(ScriptedProvider(stream_hold=hold))
    result = await h.service.handle(ACME, request(stream=True))
    assert isinstance(result, Streaming)
    pieces = aiter(result.body)
    await anext(pieces)  # the first chunk reached the client
    await result.body.aclose()  # then it hung up
    assert h.provider.streams[0].closed
    assert h.fleet.events[-1] == ("abandoned", "a")
    [event] = h.audit.events
    assert (event.status, event.outcome, event.backend) == (499, "client_disconnected", "a")
    # Without a usage chunk: the prompt estimate and one token per content event after
    # the first.
    assert (event.prompt_tokens, event.completion_tokens) == (100, 0)
    assert (await tenant_usage(h.store, ACME.tenant_id)).reserved_micro_usd == 0


async def test_a_stream_ends_under_the_policy_it_started_with_across_a_reload() -> None:
    h = harness()
    result = await h.service.handle(ACME, request(stream=True))
    assert isinstance(result, Streaming)
    policy = h.service_policy.current
    h.service_policy.current = parse_policy(POLICY.replace("input: 10, output: 10",
                                                           "input: 20, output: 20"))
    await drain(result)
    [event] = h.audit.events
    assert event.baseline_cost_micro_usd == 103 * 10  # the old baseline, not the new one
    assert policy.baseline is not None and policy.baseline.price.input_usd == 10


async def test_aclose_waits_for_a_stream_end_still_settling_after_its_client_left() -> None:
    store = GatedSettle()
    h = harness(store=store)
    result = await h.service.handle(ACME, request(stream=True))
    assert isinstance(result, Streaming)
    consuming = asyncio.create_task(drain(result))
    await store.settling.wait()  # the stream ended; settling is under way
    consuming.cancel()  # the client hangs up at [DONE]: its task is cancelled
    with pytest.raises(asyncio.CancelledError):
        await consuming
    closing = asyncio.create_task(h.service.aclose())
    await asyncio.sleep(0.01)
    assert not closing.done() and h.audit.events == []  # still waiting on the settle
    store.gate.set()
    await asyncio.wait_for(closing, 5)
    [event] = h.audit.events
    assert (event.outcome, event.cost_micro_usd) == ("ok", STREAM_COST)
    assert (await tenant_usage(store, ACME.tenant_id)).spent_day_micro_usd == STREAM_COST


async def test_aclose_returns_at_once_with_nothing_in_flight() -> None:
    h = harness()
    await h.service.handle(ACME, request())
    await asyncio.wait_for(h.service.aclose(), 1)
