"""The seam between the request path and the providers: the Provider protocol, what a dispatch
returns (a whole reply, or a stream whose first event has arrived) and what it raises.

Shared like types.py, so that providers/, routing/ and telemetry/ (which wraps a provider's
calls in CLIENT spans) depend on it and not on each other. A provider speaks one upstream API
family: it is sent payloads in the wire APIs its backends serve (`Backend.serves`; the
endpoint names which), returns OpenAI-shaped results (a Responses payload's in the Responses
API) and raises `DispatchError`, which says whether another candidate may be tried.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from gateway.errors import GatewayError
from gateway.types import Backend, Endpoint, Payload, Usage


class DispatchError(Exception):
    """A failed upstream call. `retryable`: nothing reached the client and another backend
    may succeed (5xx, 429, timeouts, refused connections, a misconfigured backend)."""

    def __init__(self, error: GatewayError, *, retryable: bool, upstream_status: int | None = None):
        super().__init__(error.message)
        self.error = error
        self.retryable = retryable
        self.upstream_status = upstream_status


@dataclass(slots=True)
class UpstreamReply:
    """A complete (non-streaming) 2xx response, body passed on as the upstream sent it."""

    body: bytes
    usage: Usage | None
    content_type: str = "application/json"


class UpstreamStream(Protocol):
    """An open stream whose first event has already arrived (so failing over is still possible
    until then). Iterating yields raw SSE data payloads; `[DONE]` is not yielded."""

    first: bytes

    def __aiter__(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class Provider(Protocol):
    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply: ...

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamStream: ...

    async def aclose(self) -> None: ...
