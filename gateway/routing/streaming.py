"""SSE relay: upstream events → client, chunk by chunk, with OpenAI's exact framing.

Never buffers: each upstream event is written as `data: <json>\\n\\n` as soon as it arrives.
It also meters the stream (usage chunk, content events, first-token time) so the request can be
settled on a normal end, an upstream error or a client disconnect alike.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import orjson

from gateway.errors import GatewayError
from gateway.providers.openai_compat import usage_from_obj
from gateway.providers.upstream_errors import parse_error_body
from gateway.types import Usage
from gateway.upstream import DispatchError, UpstreamStream

DONE = b"data: [DONE]\n\n"
CAPTURE_MAX_BYTES = 256 * 1024  # of stream events kept for an opted-in audit record


@dataclass(slots=True)
class StreamOutcome:
    usage: Usage | None = None
    events: int = 0
    first_token_at_s: float | None = None
    error: GatewayError | None = None
    cancelled: bool = False
    # The events themselves, for audit content capture (tenants that opted in), bounded.
    captured: list[bytes] | None = None
    captured_bytes: int = 0

    @property
    def outcome(self) -> str:
        if self.cancelled:
            return "client_disconnected"
        return "upstream_error" if self.error is not None else "ok"


def frame(data: bytes) -> bytes:
    return b"data: " + data + b"\n\n"


def error_event(error: GatewayError) -> bytes:
    return frame(error.to_json())


class Relay:
    """The client-facing body of a stream. `aclose()` is safe whether or not iteration began:
    a response that never started (client gone first) still closes the upstream and settles."""

    __slots__ = ("_gen", "_on_finish", "_started", "_stream")

    def __init__(
        self,
        stream: UpstreamStream,
        *,
        include_usage: bool,
        on_finish: Callable[[StreamOutcome], Awaitable[None]],
        on_first_token: Callable[[], None] | None = None,
        annotate_usage: Callable[[Usage], dict[str, str]] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        capture: bool = False,
    ) -> None:
        self._stream = stream
        self._on_finish = on_finish
        self._started = False
        self._gen = _relay(stream, include_usage=include_usage, on_finish=on_finish,
                           on_first_token=on_first_token, annotate_usage=annotate_usage,
                           clock=clock, capture=capture)

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._started = True
        return self._gen

    async def aclose(self) -> None:
        if self._started:
            await self._gen.aclose()
            return
        self._started = True
        await self._stream.aclose()
        await self._on_finish(StreamOutcome(cancelled=True))


async def _relay(
    stream: UpstreamStream,
    *,
    include_usage: bool,
    on_finish: Callable[[StreamOutcome], Awaitable[None]],
    on_first_token: Callable[[], None] | None = None,
    annotate_usage: Callable[[Usage], dict[str, str]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    capture: bool = False,
) -> AsyncIterator[bytes]:
    outcome = StreamOutcome(captured=[] if capture else None)
    finished = False
    try:
        for_event = _EventMeter(outcome, include_usage, clock, on_first_token, annotate_usage)
        last: bytes | None = None  # held back until the request is settled and recorded
        try:
            out = for_event(stream.first)
            if outcome.error is None:
                if out is not None:
                    yield out
                async for event in stream:
                    out = for_event(event)
                    if outcome.error is not None:
                        break
                    if out is not None:
                        yield out
            last = out if outcome.error is not None else DONE
        except DispatchError as exc:
            # Headers and earlier chunks are gone: the client learns of the failure from an
            # OpenAI-shaped error event (the SDK raises APIError) and a clean end of stream.
            outcome.error = exc.error
            last = error_event(exc.error)
        # The audit record is handed over (journalled) before the stream's last byte: a
        # client that saw [DONE] has its row even if the process dies a moment later.
        await stream.aclose()
        finished = True  # on_finish runs once; a cancel inside it is shielded by the caller
        await on_finish(outcome)
        if last is not None:
            yield last
    except BaseException:
        if not finished:
            outcome.cancelled = True
        raise
    finally:
        if not finished:
            await stream.aclose()
            await on_finish(outcome)


class _EventMeter:
    """Inspects each event as cheaply as possible: bytes checks first, JSON only when needed."""

    __slots__ = ("_annotate", "_clock", "_include_usage", "_on_first_token", "_outcome")

    def __init__(
        self,
        outcome: StreamOutcome,
        include_usage: bool,
        clock: Callable[[], float],
        on_first_token: Callable[[], None] | None = None,
        annotate_usage: Callable[[Usage], dict[str, str]] | None = None,
    ) -> None:
        self._outcome = outcome
        self._include_usage = include_usage
        self._clock = clock
        self._on_first_token = on_first_token
        self._annotate = annotate_usage

    def __call__(self, event: bytes) -> bytes | None:
        outcome = self._outcome
        if b'"usage":' in event and b'"usage":null' not in event and b'"usage": null' not in event:
            try:
                obj = orjson.loads(event)
            except orjson.JSONDecodeError:  # an upstream's malformed event: relayed as it came
                obj = None
            usage = _usage_of(obj) if isinstance(obj, dict) else None
            if usage is not None:
                outcome.usage = usage
                if isinstance(obj, dict) and obj.get("choices") == []:
                    # The usage-only chunk we asked for on the client's behalf. Headers are
                    # long gone, so this is where a stream says what it cost.
                    if not self._include_usage:
                        return None
                    if self._annotate is not None:
                        obj["x_gateway"] = self._annotate(usage)
                        return frame(orjson.dumps(obj))
                    return frame(event)
        elif b'"error"' in event:
            error = _as_error(event)
            if error is not None:
                outcome.error = error
                return error_event(error)
        if b'"type":"error"' in event or b'"type":"response.failed"' in event:
            # A Responses API stream (passed through) that failed: relayed as it came (it is
            # the client's format), and recorded as the error it is.
            outcome.error = _responses_failure(event)
        outcome.events += 1
        captured = outcome.captured
        if captured is not None and outcome.captured_bytes < CAPTURE_MAX_BYTES:
            captured.append(event)
            outcome.captured_bytes += len(event)
        if outcome.first_token_at_s is None and not _is_role_only(event):
            outcome.first_token_at_s = self._clock()
            if self._on_first_token is not None:
                self._on_first_token()
        return frame(event)


def _is_role_only(event: bytes) -> bool:
    """Not yet a token: a chat chunk with only the role, or a Responses API event that opens
    the response, an item or a part (the first `...delta` event is the first token)."""
    if b'"type":"response.' in event:
        return b'.delta"' not in event
    return b'"role":' in event and (b'"content":""' in event or b'"content": ""' in event)


def _usage_of(obj: dict[str, object]) -> Usage | None:
    """A chat chunk's usage, or the whole response's in a Responses API lifecycle event."""
    usage = usage_from_obj(obj.get("usage"))
    response = obj.get("response")
    if usage is None and isinstance(response, dict):
        usage = usage_from_obj(response.get("usage"))
    return usage


def _responses_failure(event: bytes) -> GatewayError:
    try:
        obj = orjson.loads(event)
    except orjson.JSONDecodeError:
        obj = None
    error = obj if isinstance(obj, dict) else {}
    if isinstance(error.get("response"), dict):
        error = error["response"].get("error") or {}
    message = error.get("message") if isinstance(error, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return GatewayError(str(message or "the upstream response failed"),
                        error_type="upstream_error",
                        code=code if isinstance(code, str) else None)


def _as_error(event: bytes) -> GatewayError | None:
    try:
        obj = orjson.loads(event)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not obj.get("error") or "choices" in obj:
        return None
    message, etype, param, code = parse_error_body(200, event)
    return GatewayError(message, error_type=etype or "upstream_error", param=param, code=code)
