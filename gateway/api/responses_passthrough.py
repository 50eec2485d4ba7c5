"""Front door: the response body for a Responses stream from a backend that serves
/v1/responses natively. Events keep their order and sequence numbers; what makes them the
gateway's own (ids, `store`, the failure events) is gateway/translate/responses_passthrough.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson

from gateway.routing.streaming import Relay
from gateway.translate.responses import LIFECYCLE_END, adopt, event_frame, failure_frames


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
        # Read to the relay's end (see TranslatedStream): it settles and records on finishing.
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
                yield failure_frames(event.get("error") or {}, snapshot, self._response_id,
                                     sequence + 1)
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
                yield failure_frames(event, snapshot, self._response_id, sequence + 1,
                                     announced=True)
        if not ended:  # the upstream stopped without saying how: for the client, it failed
            yield failure_frames({"message": "the upstream stream ended early"}, snapshot,
                                 self._response_id, sequence + 1)

    async def aclose(self) -> None:
        await self._relay.aclose()
