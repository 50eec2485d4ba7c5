"""Bounds on a request's header block, which uvicorn does not set: how long a client may
take to send it (slowloris) and how large it may grow (httptools buffers a header of any
size). Plugged into uvicorn as its HTTP protocol class by `gateway serve`.

A client that exceeds either gets an OpenAI-shaped 408 or 431 and the connection closes;
everything after the headers (bodies, streaming) is left to the app's own limits. Bytes the
HTTP parser rejects (a malformed request line or header, a bad chunk size, a non-ASCII URL)
get an OpenAI-shaped 400 instead of uvicorn's plain text. Each refusal is one INFO line
with the request id the response carries: the client's mistake, not the gateway's.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import secrets
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gateway.settings import Settings

log = logging.getLogger("gateway.api")

_REASONS = {400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large"}


@functools.cache
def header_limits() -> tuple[float, int]:
    """(seconds to send the headers, largest header block in bytes), read once per worker
    process: uvicorn builds the protocol itself, in each worker, with no way to pass them."""
    settings = Settings()
    return settings.header_timeout_s, settings.max_header_bytes


def refusal(status: int, message: str, code: str, request_id: str | None = None) -> bytes:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error",
                                 "param": None, "code": code}}).encode()
    request_header = f"x-request-id: {request_id}\r\n" if request_id else ""
    head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n{request_header}connection: close\r\n\r\n")
    return head.encode("ascii") + body


class HeaderBlockTooLarge(Exception):
    """Raised from the parser's callback to stop it; _feed turns it into the 431."""


def buffer_for_http10(cycle: Any) -> None:
    """An HTTP/1.0 client does not know chunked encoding, which uvicorn uses for any response
    without a Content-Length (streams): such a response is held and sent whole, with its
    length. Set before the app runs: uvicorn's cycle calls its `send` attribute."""
    forward = cycle.send
    start: dict[str, Any] | None = None
    parts: list[bytes] = []

    async def send(message: Any) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            names = {bytes(name).lower() for name, _ in message.get("headers", [])}
            if b"content-length" in names or b"transfer-encoding" in names:
                cycle.send = forward  # sized already: nothing to hold
                await forward(message)
                return
            start = message
            return
        if start is None or message["type"] != "http.response.body":
            await forward(message)
            return
        parts.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(parts)
        headers = [*start.get("headers", []), (b"content-length", str(len(body)).encode())]
        await forward({**start, "headers": headers})
        await forward({"type": "http.response.body", "body": body})

    cycle.send = send


def _request_id() -> str:
    # The app's format (api/parsing.py), not imported: this module loads before the app.
    return "req_" + secrets.token_hex(12)


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout_s, self._max_header_bytes = header_limits()
        self._in_headers = True
        self._header_bytes = 0
        self._parsed_header_bytes = 0  # as the parser hands them over, however they came
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_header_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_clock()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_headers:
            self._header_bytes += len(data)
        self._feed(data)
        # Checked after parsing: a chunk that also completed the headers reset the count.
        if (self._in_headers and self._header_bytes > self._max_header_bytes
                and not self.transport.is_closing()):
            self._refuse_too_large()

    def _refuse_too_large(self) -> None:
        if not self.transport.is_closing():
            self._refuse(431, f"The request's headers exceed {self._max_header_bytes} bytes.",
                         "headers_too_large")

    def on_url(self, url: bytes) -> None:
        self._parsed_header_bytes += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._parsed_header_bytes += len(name) + len(value) + 4  # ": " and CRLF
        super().on_header(name, value)

    def _feed(self, data: bytes) -> None:
        """uvicorn's own data_received, with its parser refusal OpenAI-shaped and logged
        once. A URL that is not ASCII passes httptools and fails in uvicorn's header
        callback: refused the same way."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except (httptools.HttpParserError, UnicodeDecodeError) as exc:
            if self._parsed_header_bytes > self._max_header_bytes:
                self._refuse_too_large()  # stopped in on_headers_complete, below
            elif not self.transport.is_closing():
                reason = str(exc) if isinstance(exc, httptools.HttpParserError) else (
                    "the URL is not ASCII")
                self._refuse(400, f"Invalid HTTP request: {reason or 'malformed'}.",
                             "invalid_http_request")
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        self._parsed_header_bytes = 0
        self._start_header_clock()  # a kept-alive connection's next request

    def on_headers_complete(self) -> None:
        if self._parsed_header_bytes > self._max_header_bytes:
            # The whole block came in one read, so data_received's count never saw it
            # unfinished: the parser stops here (the app never sees the request) and _feed
            # answers 431.
            raise HeaderBlockTooLarge
        self._in_headers = False
        self._header_bytes = 0
        self._stop_header_clock()
        super().on_headers_complete()
        if self.parser.get_http_version() == "1.0" and self.cycle is not None:
            buffer_for_http10(self.cycle)

    def _start_header_clock(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self._header_timeout_s, self._too_slow)

    def _stop_header_clock(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if self._in_headers and not self.transport.is_closing():
            self._refuse(408, f"The request's headers took longer than "
                              f"{self._header_timeout_s:g} s to arrive.", "header_timeout")

    def _refuse(self, status: int, message: str, code: str) -> None:
        self._stop_header_clock()
        request_id = _request_id()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "unknown client"
        log.info("refused a request from %s with %d %s (request %s): %s",
                 client, status, code, request_id, message)
        self.transport.write(refusal(status, message, code, request_id))
        self.transport.close()
