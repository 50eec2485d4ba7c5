"""Anthropic Messages upstream: the Provider over aiohttp, translating with the pure modules
anthropic_request.py (request), anthropic_reply.py (response, usage, errors) and
anthropic_stream.py (stream events).

`base_url` may end in `/v1` (as the policy's OpenAI URLs do) or not; either way requests go
to `.../v1/messages` with `x-api-key` (or a bearer token) and `anthropic-version`.
"""

from __future__ import annotations

import os
import time

import orjson

from gateway.errors import InvalidRequest, UpstreamFailed
from gateway.providers.anthropic_reply import anthropic_error, to_chat_completion
from gateway.providers.anthropic_request import MessagesRequest, to_messages_request
from gateway.providers.anthropic_stream import AnthropicStreamTranslator
from gateway.providers.base import DispatchError, UpstreamReply
from gateway.providers.event_stream import UpstreamEventStream
from gateway.providers.http_pool import (
    TRANSPORT_ERRORS,
    USER_AGENT,
    SessionPool,
    transport_error,
)
from gateway.types import Backend, Endpoint, Payload

DEFAULT_ANTHROPIC_VERSION = "2023-06-01"


class AnthropicProvider:
    def __init__(
        self,
        *,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 300.0,
        max_connections: int = 512,
    ) -> None:
        self._pool = SessionPool(
            connect_timeout_s=connect_timeout_s,
            read_timeout_s=read_timeout_s,
            max_connections=max_connections,
        )

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        request = _translate(backend, endpoint, payload, stream=False)
        try:
            async with self._pool.session(backend).post(
                messages_url(backend), data=orjson.dumps(request.body),
                headers=_headers(backend, request_id),
            ) as resp:
                body = await resp.read()
                status = resp.status
        except TRANSPORT_ERRORS as exc:
            raise transport_error(backend, exc) from exc
        if status >= 300:
            err, retryable = anthropic_error(status, body, backend.name)
            raise DispatchError(err, retryable=retryable, upstream_status=status)
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            message = None
        if not isinstance(message, dict) or message.get("type") != "message":
            raise DispatchError(
                UpstreamFailed(f"backend {backend.name} sent a reply that is not a message"),
                retryable=True, upstream_status=status,
            )
        reply, usage = to_chat_completion(message, request.json_mode, int(time.time()))
        return UpstreamReply(body=reply, usage=usage)

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamEventStream:
        request = _translate(backend, endpoint, payload, stream=True)
        try:
            resp = await self._pool.session(backend).post(
                messages_url(backend), data=orjson.dumps(request.body),
                headers=_headers(backend, request_id),
            )
        except TRANSPORT_ERRORS as exc:
            raise transport_error(backend, exc) from exc
        if resp.status >= 300:
            try:
                error_body = await resp.read()
            except TRANSPORT_ERRORS:
                error_body = b""
            finally:
                resp.release()
            err, retryable = anthropic_error(resp.status, error_body, backend.name)
            raise DispatchError(err, retryable=retryable, upstream_status=resp.status)
        translator = AnthropicStreamTranslator(request.json_mode, int(time.time()), backend.name)
        stream = UpstreamEventStream(resp, backend, translator)
        await stream.start()
        return stream

    async def aclose(self) -> None:
        await self._pool.aclose()


def messages_url(backend: Backend) -> str:
    base = backend.base_url
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def _translate(
    backend: Backend, endpoint: Endpoint, payload: Payload, *, stream: bool
) -> MessagesRequest:
    if endpoint is not Endpoint.CHAT:
        raise DispatchError(
            InvalidRequest(
                f"backend {backend.name} (anthropic) serves chat completions only, "
                f"not /v1/{endpoint.value}", code="unsupported_endpoint",
            ),
            retryable=False,
        )
    try:
        return to_messages_request(payload, backend, stream=stream)
    except InvalidRequest as exc:
        # The client's request, not the backend, is the problem: no failover, a clear 400.
        raise DispatchError(exc, retryable=False) from exc


def _headers(backend: Backend, request_id: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Request-Id": request_id,
        "anthropic-version": backend.anthropic_version or DEFAULT_ANTHROPIC_VERSION,
    }
    key = os.environ.get(backend.api_key_env) if backend.api_key_env else None
    if key:
        if backend.auth == "bearer":
            headers["Authorization"] = f"Bearer {key}"
        else:
            headers["x-api-key"] = key
    return headers
