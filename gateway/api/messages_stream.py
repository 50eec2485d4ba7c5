"""Front door: the relay's OpenAI SSE frames → Anthropic's named stream events, as the
response body. The translation itself is gateway/translate/messages_stream.py; wrapping the
relay keeps metering, settling and disconnect handling the relay's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from gateway.routing.streaming import Relay
from gateway.translate.anthropic import AnthropicEventEncoder


class AnthropicStream:
    """The client-facing body: reads the relay's `data:` frames, writes Anthropic events."""

    __slots__ = ("_encoder", "_relay")

    def __init__(self, relay: Relay, encoder: AnthropicEventEncoder) -> None:
        self._relay = relay
        self._encoder = encoder

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
                yield b"".join(encoder.end())
                continue
            chunk = orjson.loads(data)
            if isinstance(chunk, dict) and isinstance(chunk.get("error"), dict):
                # Headers are gone: Anthropic clients learn of it from an `error` event.
                kind = "overloaded_error" if chunk["error"].get("code") == "overloaded" \
                    else "api_error"
                ended = True
                yield encoder.error(chunk["error"], kind)
                continue
            out = encoder.feed(chunk)
            if out:
                yield b"".join(out)

    async def aclose(self) -> None:
        await self._relay.aclose()
