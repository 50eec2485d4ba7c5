"""The one relay loop under both translated front doors' streams: what it writes is exactly
what its encoder says, it reads the relay to its end, and it ends a broken stream with the
format's error events (no I/O: the relay is a list of frames)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import orjson

from gateway.api.translated_stream import TranslatedStream
from gateway.translate.anthropic import AnthropicEventEncoder
from gateway.translate.responses import ResponsesEventEncoder

CHUNKS = [
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "Hel"}}]},
    {"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "lo"},
                                      "finish_reason": "stop"}]},
    {"id": "chatcmpl-1", "choices": [],
     "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
]
# What differs between two runs of the Responses encoder: the clock's second, random item ids.
UNSTABLE = re.compile(rb'"created_at":\d+|_[0-9a-f]{48}"')
BROKEN = {"error": {"message": "no backend had room", "type": "server_error",
                    "param": None, "code": "overloaded"}}


class FrameRelay:
    """The relay's side of the seam: SSE `data:` frames, counted as they are read."""

    def __init__(self, payloads: list[Any]) -> None:
        self.frames = [b"data: " + (p if isinstance(p, bytes) else orjson.dumps(p)) + b"\n\n"
                       for p in payloads]
        self.read = 0
        self.closed = False

    async def _frames(self) -> AsyncIterator[bytes]:
        for frame in self.frames:
            self.read += 1
            yield frame

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._frames()

    async def aclose(self) -> None:
        self.closed = True


async def body(stream: TranslatedStream) -> list[bytes]:
    return [part async for part in stream]


async def test_a_finished_stream_is_the_encoders_events_byte_for_byte() -> None:
    for make in (lambda: AnthropicEventEncoder("claude", "msg_1"),
                 lambda: ResponsesEventEncoder("resp_1", {}, "m", store=False)):
        reference = make()
        expected = b"".join([*(b"".join(reference.feed(c)) for c in CHUNKS),
                             b"".join(reference.end())])
        written = b"".join(await body(TranslatedStream(FrameRelay([*CHUNKS, b"[DONE]"]),
                                                       make())))
        assert UNSTABLE.sub(b"", written) == UNSTABLE.sub(b"", expected)
        assert written.count(b"event: ") == expected.count(b"event: ") > 3


async def test_on_end_sees_the_finished_stream_before_its_last_events_go_out() -> None:
    encoder = ResponsesEventEncoder("resp_1", {}, "m", store=True)
    written: list[bytes] = []
    seen: list[tuple[int, dict[str, Any] | None]] = []

    async def on_end() -> None:
        seen.append((len(written), encoder.final))

    relay = FrameRelay([*CHUNKS, b"[DONE]", {"ignored": True}])
    async for part in TranslatedStream(relay, encoder, on_end):
        written.append(part)
    assert len(seen) == 1 and seen[0][1] is not None
    assert seen[0][1]["status"] == "completed"
    assert seen[0][0] == len(written) - 1  # stored before the last write
    assert b"response.completed" in written[-1]
    assert relay.read == len(relay.frames)  # read to the end, nothing after [DONE] written


async def test_a_broken_stream_ends_with_the_formats_error_events() -> None:
    relay = FrameRelay([CHUNKS[0], CHUNKS[1], BROKEN, b"[DONE]"])
    anthropic = await body(TranslatedStream(relay, AnthropicEventEncoder("claude", "msg_1")))
    assert relay.read == len(relay.frames)
    assert anthropic[-1] == (b'event: error\ndata: {"type":"error","error":'
                             b'{"type":"overloaded_error","message":"no backend had room"}}\n\n')
    other = {"error": {**BROKEN["error"], "code": "upstream_error"}}
    anthropic = await body(TranslatedStream(FrameRelay([CHUNKS[1], other]),
                                            AnthropicEventEncoder("claude", "msg_1")))
    assert b'"type":"api_error"' in anthropic[-1]

    stored: list[int] = []

    async def on_end() -> None:
        stored.append(1)

    responses = await body(TranslatedStream(
        FrameRelay([CHUNKS[1], BROKEN, b"[DONE]"]),
        ResponsesEventEncoder("resp_1", {}, "m", store=True), on_end))
    kinds = [line.split(b"\n", 1)[0] for line in b"".join(responses).split(b"\n\n") if line]
    assert kinds[-2:] == [b"event: error", b"event: response.failed"]
    assert stored == []  # a failed response is not kept


async def test_closing_the_body_closes_the_relay() -> None:
    relay = FrameRelay([])
    await TranslatedStream(relay, AnthropicEventEncoder("claude", "msg_1")).aclose()
    assert relay.closed
