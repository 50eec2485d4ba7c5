"""Incremental Server-Sent Events splitting: bytes as they arrive → complete `data` payloads.

Only what OpenAI-style streams use: `data:` lines (joined by newlines when an event has
several), comments (`:` keep-alives) and other fields ignored. CRLF and LF both end lines.
"""

from __future__ import annotations


class SSESplitter:
    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer + chunk if self._buffer else chunk
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events: list[bytes] = []
        start = 0
        while True:
            end = buffer.find(b"\n\n", start)
            if end < 0:
                break
            data = _event_data(buffer[start:end])
            if data is not None:
                events.append(data)
            start = end + 2
        self._buffer = buffer[start:]
        return events

    def flush(self) -> list[bytes]:
        """An event cut off by the end of the stream without its blank line."""
        rest, self._buffer = self._buffer, b""
        if not rest.strip():
            return []
        data = _event_data(rest.rstrip(b"\n"))
        return [data] if data is not None else []


def _event_data(block: bytes) -> bytes | None:
    if block.startswith(b"data: ") and b"\n" not in block:
        return block[6:]  # the common case: one data line
    lines = [line for line in block.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    return b"\n".join(line[6:] if line.startswith(b"data: ") else line[5:] for line in lines)
