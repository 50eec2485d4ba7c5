"""OpenAI-compatible upstreams (vLLM, OpenAI, any `/v1/chat/completions` server) over aiohttp.

Why aiohttp and not httpx here: on this class of machine a pass-through proxy with httpx's
default transport spent ~10x the CPU per request of the same proxy with aiohttp's client
(see benchmarks/RESULTS.md). The request path is the one place that cost matters.

One `ClientSession` (connection pool) per upstream base URL, created on first use inside the
lifespan-owned provider and closed with it. The body is re-serialised once with orjson after
the model name is swapped; every other field reaches the backend as the client sent it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import aiohttp
import orjson

from gateway.errors import UpstreamFailed, UpstreamTimeout
from gateway.providers.base import DispatchError, UpstreamReply
from gateway.providers.sse import SSESplitter
from gateway.providers.upstream_errors import normalise_upstream_error
from gateway.types import Backend, Endpoint, Payload, Usage

USER_AGENT = "llm-routing-gateway/0.1"


class OpenAICompatProvider:
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

    def _session(self, backend: Backend) -> aiohttp.ClientSession:
        session = self._sessions.get(backend.base_url)
        if session is None or session.closed:
            connector = aiohttp.TCPConnector(
                limit=min(backend.max_connections, self._max_connections),
                limit_per_host=0,
                ttl_dns_cache=300,
                keepalive_timeout=30,
            )
            timeout = aiohttp.ClientTimeout(
                total=None,  # streams may legitimately run for minutes
                connect=min(backend.connect_timeout_s, self._connect_timeout_s),
                sock_read=min(backend.read_timeout_s, self._read_timeout_s),
            )
            session = aiohttp.ClientSession(
                connector=connector,
                timeout=timeout,
                skip_auto_headers=("User-Agent",),
                raise_for_status=False,
            )
            self._sessions[backend.base_url] = session
        return session

    def _headers(self, backend: Backend, request_id: str) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Request-Id": request_id,
        }
        if backend.api_key_env:
            key = os.environ.get(backend.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, backend: Backend, payload: Payload, *, stream: bool) -> bytes:
        body = dict(payload)
        body["model"] = backend.model
        if stream:
            # Ask for usage even when the client did not: it is how cost gets settled. The
            # relay drops the extra usage chunk for clients that did not ask.
            options = body.get("stream_options")
            options = dict(options) if isinstance(options, dict) else {}
            options["include_usage"] = True
            body["stream_options"] = options
        return orjson.dumps(body)

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        url = f"{backend.base_url}/{endpoint.value}"
        try:
            async with self._session(backend).post(
                url, data=self._body(backend, payload, stream=False),
                headers=self._headers(backend, request_id),
            ) as resp:
                body = await resp.read()
                status = resp.status
                content_type = resp.headers.get("Content-Type", "application/json")
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise _transport_error(backend, exc) from exc
        if status >= 300:
            err, retryable = normalise_upstream_error(status, body, backend.name)
            raise DispatchError(err, retryable=retryable, upstream_status=status)
        return UpstreamReply(body=body, usage=usage_from_body(body), content_type=content_type)

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> _AiohttpStream:
        url = f"{backend.base_url}/{endpoint.value}"
        session = self._session(backend)
        try:
            resp = await session.post(
                url, data=self._body(backend, payload, stream=True),
                headers=self._headers(backend, request_id),
            )
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            raise _transport_error(backend, exc) from exc
        if resp.status >= 300:
            try:
                body = await resp.read()
            except (TimeoutError, aiohttp.ClientError, OSError):
                body = b""
            finally:
                resp.release()
            err, retryable = normalise_upstream_error(resp.status, body, backend.name)
            raise DispatchError(err, retryable=retryable, upstream_status=resp.status)
        stream = _AiohttpStream(resp, backend)
        await stream.start()
        return stream

    async def aclose(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


class _AiohttpStream:
    """Relays SSE data payloads from an aiohttp response, keeping the first one in hand."""

    __slots__ = ("_backend", "_pending", "_resp", "_splitter", "first")

    def __init__(self, resp: aiohttp.ClientResponse, backend: Backend) -> None:
        self._resp = resp
        self._backend = backend
        self._splitter = SSESplitter()
        self._pending: list[bytes] = []
        self.first = b""

    async def start(self) -> None:
        """Wait for the first event: until it arrives, failing over is still invisible."""
        try:
            while not self._pending:
                chunk = await self._resp.content.readany()
                if not chunk:
                    self._pending.extend(self._splitter.flush())
                    if not self._pending:
                        raise DispatchError(
                            UpstreamFailed(f"backend {self._backend.name} closed an empty stream"),
                            retryable=True,
                        )
                    break
                self._pending.extend(self._splitter.feed(chunk))
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self._resp.close()
            raise _transport_error(self._backend, exc) from exc
        except BaseException:
            self._resp.close()
            raise
        self.first = self._pending.pop(0)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending, self._pending = self._pending, []
        for event in pending:
            if event == b"[DONE]":
                return
            yield event
        content = self._resp.content
        while True:
            try:
                chunk = await content.readany()
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                raise _transport_error(self._backend, exc, mid_stream=True) from exc
            if not chunk:
                for event in self._splitter.flush():
                    if event != b"[DONE]":
                        yield event
                return
            for event in self._splitter.feed(chunk):
                if event == b"[DONE]":
                    return
                yield event

    async def aclose(self) -> None:
        # close(), not release(): an unfinished stream must drop the connection so the
        # upstream (vLLM) sees the disconnect and aborts the generation.
        if not self._resp.closed:
            self._resp.close()


def usage_from_body(body: bytes) -> Usage | None:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return usage_from_obj(obj.get("usage")) if isinstance(obj, dict) else None


def usage_from_obj(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=int(cached or 0),
    )


def _transport_error(
    backend: Backend, exc: BaseException, *, mid_stream: bool = False
) -> DispatchError:
    what = "stream broke" if mid_stream else "is unreachable"
    if isinstance(exc, TimeoutError):
        err: UpstreamFailed = UpstreamTimeout(f"backend {backend.name} timed out")
    else:
        err = UpstreamFailed(f"backend {backend.name} {what} ({type(exc).__name__})")
    return DispatchError(err, retryable=not mid_stream)
