"""Front door: a Responses API reply or stream from a backend that serves /v1/responses
natively, made the gateway's own (pure apart from the stream wrapper).

The upstream kept nothing (`store: false`) and never saw the gateway's conversation ids, so
the response takes the gateway's id, `store`, `previous_response_id` and `metadata`, and the
requested model name (as translated replies do). Events keep their order and sequence
numbers; the relay's data-only frames get their `event:` line back. A stream that breaks
ends with `error` and `response.failed`, as a translated one does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson

from gateway.routing.streaming import Relay

LIFECYCLE_END = frozenset({"response.completed", "response.incomplete", "response.failed"})


def adopt(response: dict[str, Any], response_id: str, echo: dict[str, Any], model: str,
          *, store: bool) -> dict[str, Any]:
    response["id"] = response_id
    response["model"] = model
    response["store"] = store
    response["previous_response_id"] = echo.get("previous_response_id")
    response["metadata"] = echo.get("metadata") or {}
    return response


def event_frame(kind: str, data: bytes) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


class PassthroughStream:
    """The client-facing body of a passed-through Responses stream; `on_end` gets the final
    response (completed or incomplete) to store before the last event goes out."""

    __slots__ = ("_echo", "_model", "_on_end", "_relay", "_response_id", "_store")

    def __init__(self, relay: Relay, response_id: str, echo: dict[str, Any], model: str, *,
                 store: bool,
                 on_end: Callable[[dict[str, Any]], Awaitable[None]] | None = None) -> None:
        self._relay = relay
        self._response_id = response_id
        self._echo = echo
        self._model = model
        self._store = store
        self._on_end = on_end

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Read to the relay's end (see ResponsesStream): it settles and records on finishing.
        snapshot: dict[str, Any] = {}
        sequence = -1
        ended = False
        async for frame in self._relay:
            data = frame[6:-2] if frame.startswith(b"data: ") else frame.strip()
            if ended or data == b"[DONE]":
                continue
            event = orjson.loads(data)
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if not isinstance(kind, str):  # the relay's own error frame: the stream broke
                ended = True
                yield self._failure(event.get("error") or {}, snapshot, sequence + 1)
                continue
            if isinstance(event.get("sequence_number"), int):
                sequence = event["sequence_number"]
            if isinstance(event.get("response"), dict):
                snapshot = adopt(event["response"], self._response_id, self._echo,
                                 self._model, store=self._store)
                data = orjson.dumps(event)
                if kind in LIFECYCLE_END:
                    ended = True
                    if kind != "response.failed" and self._on_end is not None:
                        await self._on_end(snapshot)
            yield event_frame(kind, data)
            if kind == "error":
                ended = True
                yield self._failure(event, snapshot, sequence + 1, announced=True)
        if not ended:  # the upstream stopped without saying how: for the client, it failed
            yield self._failure({"message": "the upstream stream ended early"}, snapshot,
                                sequence + 1)

    def _failure(self, error: dict[str, Any], snapshot: dict[str, Any], sequence: int, *,
                 announced: bool = False) -> bytes:
        code = error.get("code") or "server_error"
        message = error.get("message") or "the upstream stream failed"
        out = b""
        if not announced:
            out = event_frame("error", orjson.dumps({
                "type": "error", "sequence_number": sequence, "code": code,
                "message": message, "param": error.get("param")}))
            sequence += 1
        response = {**snapshot, "id": self._response_id, "status": "failed",
                    "error": {"code": code, "message": message}}
        return out + event_frame("response.failed", orjson.dumps({
            "type": "response.failed", "sequence_number": sequence, "response": response}))

    async def aclose(self) -> None:
        await self._relay.aclose()
