"""The few bytes of HTTP/1.1 the benchmark mock writes and reads: response heads, sized bodies,
chunked SSE events and the request's Content-Length."""

from __future__ import annotations


def head(status: bytes, content_type: bytes, extra: bytes, keep_alive: bool) -> bytes:
    connection = b"" if keep_alive else b"connection: close\r\n"
    status_line = b"HTTP/1.1 " + status + b"\r\n"
    return status_line + b"content-type: " + content_type + b"\r\n" + extra + connection


def sized(status: bytes, content_type: bytes, body: bytes, keep_alive: bool) -> bytes:
    length = b"content-length: %d\r\n" % len(body)
    return head(status, content_type, length, keep_alive) + b"\r\n" + body


def chunk(payload: bytes) -> bytes:
    # One SSE event per HTTP chunk, the way streaming servers usually flush.
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def content_length(lowered_head: bytes) -> int:
    """Content-Length from a lower-cased request head; 0 when absent, -1 when malformed."""
    at = lowered_head.find(b"\r\ncontent-length:")
    if at < 0:
        return 0
    start = at + len(b"\r\ncontent-length:")
    end = lowered_head.find(b"\r\n", start)
    try:
        return int(lowered_head[start : end if end >= 0 else None])
    except ValueError:
        return -1
