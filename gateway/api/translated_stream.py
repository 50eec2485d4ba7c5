"""Front doors: the relay's OpenAI SSE frames → another format's stream events, as the
response body (Anthropic Messages and Responses alike). The translation itself is the
encoder's (gateway/translate: messages_stream.py, responses_stream.py); wrapping the relay
keeps metering, settling and disconnect handling the relay's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import orjson

from gateway.api.sse_response import ClientStream
from gateway.translate.chat_stream_encoder import ChatStreamEncoder


class TranslatedStream:
    """The client-facing body: reads the relay's `data:` frames, writes the encoder's events;
    `on_end`, if given, runs when the upstream finished, before the last events go out."""

    __slots__ = ("_encoder", "_on_end", "_relay")

    def __init__(self, relay: ClientStream, encoder: ChatStreamEncoder,
                 on_end: Callable[[], Awaitable[None]] | None = None) -> None:
        self._relay = relay
        self._encoder = encoder
        self._on_end = on_end

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # The relay is read to its end, never left early: it settles and records the request
        # as served only when it finishes (closing it mid-way reads as a client that left).
        encoder = self._encoder
        ended = False
        async for frame in self._relay:
            if ended:
                continue
            data = frame[6:-2] if frame.startswith(b"data: ") else frame.strip()
            if data == b"[DONE]":
                ended = True
                out = encoder.end()
                if self._on_end is not None:
                    await self._on_end()
                yield b"".join(out)
                continue
            chunk = orjson.loads(data)
            if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
                # Headers are gone: the client learns of it from the format's error events.
                ended = True
                yield b"".join(encoder.error(chunk["error"]))
                continue
            out = encoder.feed(chunk)
            if out:
                yield b"".join(out)

    async def aclose(self) -> None:
        await self._relay.aclose()
