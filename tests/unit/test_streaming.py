"""The SSE relay's framing, metering and failure handling, on scripted upstream streams."""

from collections.abc import AsyncIterator

import orjson

from gateway.errors import UpstreamFailed
from gateway.routing.streaming import Relay, StreamOutcome
from gateway.upstream import DispatchError


class ScriptedStream:
    def __init__(self, events: list[bytes], fail_after: int | None = None) -> None:
        self.first, *self._rest = events
        self._fail_after = fail_after
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for i, event in enumerate(self._rest):
            if self._fail_after is not None and i >= self._fail_after:
                raise DispatchError(UpstreamFailed("stream broke"), retryable=False)
            yield event

    async def aclose(self) -> None:
        self.closed = True


def chunk(content: str | None = None, role: bool = False, finish: str | None = None) -> bytes:
    delta: dict[str, str] = {}
    if role:
        delta = {"role": "assistant", "content": ""}
    elif content is not None:
        delta = {"content": content}
    return orjson.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]})


USAGE = orjson.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [],
                      "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9,
                                "prompt_tokens_details": {"cached_tokens": 3}}})


async def run(stream: ScriptedStream, include_usage: bool) -> tuple[list[bytes], StreamOutcome]:
    outcomes: list[StreamOutcome] = []

    async def on_finish(outcome: StreamOutcome) -> None:
        outcomes.append(outcome)

    relay = Relay(stream, include_usage=include_usage, on_finish=on_finish)
    out = [part async for part in relay]
    await relay.aclose()
    assert len(outcomes) == 1
    return out, outcomes[0]


async def test_exact_framing_and_usage_metered_even_when_not_forwarded():
    events = [chunk(role=True), chunk("a"), chunk("b"), chunk(finish="stop"), USAGE]
    for include_usage in (True, False):
        stream = ScriptedStream(list(events))
        out, outcome = await run(stream, include_usage)
        assert all(part.startswith(b"data: ") and part.endswith(b"\n\n") for part in out)
        assert out[-1] == b"data: [DONE]\n\n"
        assert (USAGE in b"".join(out)) is include_usage
        assert outcome.usage is not None and outcome.usage.cached_tokens == 3
        assert outcome.first_token_at_s is not None and outcome.outcome == "ok"
        assert stream.closed


async def test_mid_stream_failure_ends_with_an_error_event_not_silence():
    stream = ScriptedStream([chunk(role=True), chunk("a"), chunk("b")], fail_after=1)
    out, outcome = await run(stream, False)
    last = orjson.loads(out[-1][len(b"data: "):])
    assert set(last["error"]) == {"message", "type", "param", "code"}
    assert b"[DONE]" not in b"".join(out)
    assert outcome.outcome == "upstream_error" and stream.closed


async def test_upstream_error_event_is_normalised():
    vllm_error = orjson.dumps({"error": {"message": "boom", "type": "InternalServerError",
                                         "param": None, "code": 500}})
    out, outcome = await run(ScriptedStream([chunk(role=True), vllm_error, chunk("x")]), False)
    error = orjson.loads(out[1][len(b"data: "):])["error"]
    assert error["code"] == "500" and error["message"] == "boom"
    assert len(out) == 2 and outcome.error is not None


async def test_a_relay_never_started_still_closes_upstream_and_settles():
    stream = ScriptedStream([chunk(role=True)])
    outcomes: list[StreamOutcome] = []

    async def on_finish(outcome: StreamOutcome) -> None:
        outcomes.append(outcome)

    await Relay(stream, include_usage=False, on_finish=on_finish).aclose()
    assert stream.closed and outcomes[0].cancelled


async def test_the_request_is_recorded_before_the_last_byte_is_sent():
    """A client that has seen [DONE] (or the closing error event) has its audit record."""
    for stream, last in ((ScriptedStream([chunk(role=True), chunk("a")]), b"data: [DONE]\n\n"),
                         (ScriptedStream([chunk("a"), chunk("b")], fail_after=0), b"error")):
        order: list[str] = []

        async def on_finish(outcome: StreamOutcome, order: list[str] = order) -> None:
            order.append("recorded")

        relay = Relay(stream, include_usage=False, on_finish=on_finish)
        async for part in relay:
            order.append("last" if last in part else "chunk")
        await relay.aclose()
        assert order[-2:] == ["recorded", "last"]
        assert order.count("recorded") == 1
