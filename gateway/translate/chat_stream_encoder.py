"""What a front door's stream translation is: the gateway's OpenAI chat chunks in, the
client's own SSE events out. One per client format (messages_stream.py for Claude clients,
responses_stream.py for Responses clients); gateway/api/translated_stream.py feeds any of
them from the relay."""

from __future__ import annotations

from typing import Any, Protocol


class ChatStreamEncoder(Protocol):
    def feed(self, chunk: dict[str, Any]) -> list[bytes]:
        """The events one chat.completion.chunk makes (none, while a block is filling)."""
        ...

    def end(self) -> list[bytes]:
        """The events that close a stream the upstream finished ([DONE])."""
        ...

    def error(self, error: dict[str, Any]) -> list[bytes]:
        """The events that close a stream which broke after its headers were sent; `error`
        is the OpenAI error object of the relay's last frame."""
        ...
