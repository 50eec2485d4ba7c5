"""Puts redacted values back into what an external backend answered, whole or streamed.

The request left the self_hosted zone with typed placeholders ([EMAIL_1]); the client gets
the originals back in message content, tool-call arguments and completion text. A stream
restores per choice, holding back only a tail that could still become a placeholder, so a
placeholder split across chunks is restored too. The mapping lives for one request only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson

from gateway.classify.redaction import RedactionMap, StreamRestorer, restore
from gateway.upstream import UpstreamStream


def restore_body(body: bytes, mapping: RedactionMap) -> bytes:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return restore(body.decode("utf-8", "replace"), mapping).encode()
    if not isinstance(obj, dict):
        return body
    for choice in _objects(obj.get("choices")):
        if isinstance(choice.get("text"), str):
            choice["text"] = restore(choice["text"], mapping)
        message = choice.get("message")
        if isinstance(message, dict):
            _restore_message(message, mapping)
    return orjson.dumps(obj)


def _restore_message(message: dict[str, Any], mapping: RedactionMap) -> None:
    if isinstance(message.get("content"), str):
        message["content"] = restore(message["content"], mapping)
    for call in _objects(message.get("tool_calls")):
        function = call.get("function")
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            function["arguments"] = restore(function["arguments"], mapping)


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list; anything else an upstream put there holds nothing to restore."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _index(value: Any) -> int:
    # Keys the per-choice restorers: an upstream's index that is not a number is choice 0.
    return value if isinstance(value, int) else 0


class RestoringStream:
    """An UpstreamStream whose events come back with the originals restored."""

    def __init__(self, inner: UpstreamStream, mapping: RedactionMap) -> None:
        self._inner = inner
        self._mapping = mapping
        self._restorers: dict[tuple[int, str], StreamRestorer] = {}
        self.first = self._event(inner.first)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for event in self._inner:
            yield self._event(event)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _event(self, event: bytes) -> bytes:
        if b"[" not in event and not self._restorers:
            return event  # nothing held back and nothing to restore: pass through untouched
        try:
            obj = orjson.loads(event)
        except orjson.JSONDecodeError:
            return event
        if not isinstance(obj, dict):
            return event
        for choice in _objects(obj.get("choices")):
            index = _index(choice.get("index"))
            done = choice.get("finish_reason") is not None
            if isinstance(choice.get("text"), str):
                choice["text"] = self._feed((index, "text"), choice["text"], done)
            delta = choice.get("delta")
            if isinstance(delta, dict):
                content = delta.get("content")
                if isinstance(content, str) or done:
                    # A last event whose content is not text (null, or junk) still flushes
                    # what was held back; the junk itself is not ours to fix.
                    text = self._feed((index, "content"),
                                      content if isinstance(content, str) else "", done)
                    if text or isinstance(content, str):
                        delta["content"] = text
                for call in _objects(delta.get("tool_calls")):
                    function = call.get("function")
                    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                        key = (index, f"tool{_index(call.get('index'))}")
                        function["arguments"] = self._feed(key, function["arguments"], done)
        return orjson.dumps(obj)

    def _feed(self, key: tuple[int, str], text: str, done: bool) -> str:
        restorer = self._restorers.get(key)
        if restorer is None:
            restorer = self._restorers[key] = StreamRestorer(self._mapping)
        out = restorer.feed(text)
        if done:
            out += restorer.flush()
            del self._restorers[key]
        return out
