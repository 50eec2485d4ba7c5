"""aiohttp connection pools, one per upstream base URL, and transport failures as DispatchErrors.

Shared by every provider so that each upstream (vLLM, OpenAI, Azure, Anthropic) gets the same
deliberate limits and timeouts, created on first use and closed by the lifespan.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Mapping

import aiohttp
from opentelemetry.trace import get_current_span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.errors import GatewayError, UpstreamFailed, UpstreamTimeout
from gateway.types import AuthScheme, Backend
from gateway.upstream import DispatchError

USER_AGENT = "llm-routing-gateway/0.1"
TRANSPORT_ERRORS = (TimeoutError, aiohttp.ClientError, OSError)
# An idle upstream connection is dropped before the server would drop it. uvicorn, and so
# vLLM's OpenAI server, closes a connection idle for 5 s (VLLM_HTTP_TIMEOUT_KEEP_ALIVE); a
# client that keeps it longer sends some requests on a connection the server is closing at
# that moment, and they fail with "Server disconnected" before the server ever read them.
# (httpx, and so the openai SDK, expires idle connections after 5 s for the same reason.)
IDLE_CONNECTION_S = 4.0
W3C_TRACE_CONTEXT = TraceContextTextMapPropagator()  # stateless: reads the context it is given
API_KEY = AuthScheme.API_KEY  # read once: from its class, a member costs a descriptor call


class SessionPool:
    def __init__(
        self,
        *,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 300.0,
        max_connections: int = 512,
    ) -> None:
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._max_connections = max_connections
        self._sessions: dict[str, aiohttp.ClientSession] = {}

    def session(self, backend: Backend) -> aiohttp.ClientSession:
        session = self._sessions.get(backend.base_url)
        if session is None or session.closed:
            # The policy's limit and read timeout for this backend, else the settings.
            connector = aiohttp.TCPConnector(
                limit=backend.max_connections or self._max_connections,
                limit_per_host=0,
                ttl_dns_cache=300,
                keepalive_timeout=IDLE_CONNECTION_S,
            )
            timeout = aiohttp.ClientTimeout(
                total=None,  # streams may legitimately run for minutes
                connect=self._connect_timeout_s,
                sock_read=backend.read_timeout_s or self._read_timeout_s,
            )
            session = aiohttp.ClientSession(
                connector=connector,
                timeout=timeout,
                skip_auto_headers=("User-Agent",),
                raise_for_status=False,
            )
            self._sessions[backend.base_url] = session
        return session

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def posted(
    session: aiohttp.ClientSession, url: str, data: bytes, headers: dict[str, str]
) -> aiohttp.ClientResponse:
    """The response to a POST, sent once more when the server closed the connection before
    answering. That is how a kept-alive connection looks when the server's idle timeout
    fires as the request is written (IDLE_CONNECTION_S narrows that race, and a starved
    process widens it again): the server never read the request. Failing over would send it
    anyway, to a backend the router ranked lower; a failed connect is not retried here."""
    try:
        return await session.post(url, data=data, headers=headers)
    except aiohttp.ClientConnectorError:
        raise
    except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
        return await session.post(url, data=data, headers=headers)


def transport_error(
    backend: Backend, exc: BaseException, *, mid_stream: bool = False
) -> DispatchError:
    what = "stream broke" if mid_stream else "is unreachable"
    if isinstance(exc, TimeoutError):
        err: UpstreamFailed = UpstreamTimeout(f"backend {backend.name} timed out")
    else:
        err = UpstreamFailed(f"backend {backend.name} {what} ({type(exc).__name__})")
    return DispatchError(err, retryable=not mid_stream)


# An API's error body → the client's error and whether another candidate may be tried.
ErrorMapper = Callable[[int, bytes], tuple[GatewayError, bool]]


def upstream_headers(
    backend: Backend, request_id: str, *, api_key_header: str | None = None
) -> dict[str, str]:
    """What every upstream call carries, plus the backend's key (read from the policy's
    api_key_file when the policy was loaded, else from the environment variable it names): in
    the API's own header when the backend's auth is `api_key`, else as a bearer token."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Request-Id": request_id,
    }
    # A traced request sends from inside its attempt's span (telemetry/tracing.py): the
    # upstream joins the trace. Untraced, no span is ever current and nothing is added.
    if get_current_span().get_span_context().is_valid:
        W3C_TRACE_CONTEXT.inject(headers)
    key = backend.api_key or (os.environ.get(backend.api_key_env) if backend.api_key_env
                              else None)
    if key:
        if backend.auth is API_KEY and api_key_header:
            headers[api_key_header] = key
        else:
            headers["Authorization"] = f"Bearer {key}"
    return headers


async def post_whole(
    session: aiohttp.ClientSession,
    backend: Backend,
    url: str,
    data: bytes,
    headers: dict[str, str],
    to_error: ErrorMapper,
) -> tuple[bytes, str]:
    """POST and read the whole 2xx reply (body, content type); anything else is a
    DispatchError, from the API's error body or from the transport."""
    try:
        async with await posted(session, url, data, headers) as resp:
            body = await resp.read()
            status = resp.status
            content_type = resp.headers.get("Content-Type", "application/json")
            if status >= 300:
                err, retryable = to_error(status, body)
                carry_retry_after(err, status, resp.headers)
                raise DispatchError(err, retryable=retryable, upstream_status=status)
    except TRANSPORT_ERRORS as exc:
        raise transport_error(backend, exc) from exc
    return body, content_type


async def post_stream(
    session: aiohttp.ClientSession,
    backend: Backend,
    url: str,
    data: bytes,
    headers: dict[str, str],
    to_error: ErrorMapper,
) -> aiohttp.ClientResponse:
    """POST and return the open 2xx response for the caller to stream; a non-2xx is read,
    released and raised as a DispatchError."""
    try:
        resp = await posted(session, url, data, headers)
    except TRANSPORT_ERRORS as exc:
        raise transport_error(backend, exc) from exc
    if resp.status >= 300:
        try:
            error_body = await resp.read()
        except TRANSPORT_ERRORS:
            error_body = b""
        finally:
            resp.release()
        err, retryable = to_error(resp.status, error_body)
        carry_retry_after(err, resp.status, resp.headers)
        raise DispatchError(err, retryable=retryable, upstream_status=resp.status)
    return resp


# An upstream's "come back later" statuses and the headers that say when (OpenAI and Azure
# send both, Anthropic `retry-after`): passed on, so the client's SDK waits as it was told.
BACKOFF_STATUSES = frozenset({429, 503, 529})
RETRY_AFTER_HEADERS = ("retry-after", "retry-after-ms")
_RETRY_AFTER_VALUE = re.compile(r"^[0-9A-Za-z ,:.-]{1,40}$")  # seconds or an HTTP date


def carry_retry_after(err: GatewayError, status: int, headers: Mapping[str, str]) -> None:
    if status not in BACKOFF_STATUSES:
        return
    for name in RETRY_AFTER_HEADERS:
        value = headers.get(name)
        if value is not None and _RETRY_AFTER_VALUE.match(value):
            err.extra_headers[name] = value
