"""Anthropic Messages upstream: the Provider over aiohttp. It is sent Messages payloads
(gateway/translate/wire.py translates a request into one) and answers in OpenAI chat,
translating replies and stream events with gateway/translate (shared with the front door)
and error bodies with anthropic_errors.py.

`base_url` may end in `/v1` (as the policy's OpenAI URLs do) or not; either way requests go
to `.../v1/messages` with `x-api-key` (or a bearer token) and `anthropic-version`.
"""

from __future__ import annotations

import time

import orjson

from gateway.errors import InvalidRequest, UpstreamFailed
from gateway.providers.anthropic_errors import anthropic_error
from gateway.providers.event_stream import UpstreamEventStream
from gateway.providers.http_pool import SessionPool, post_stream, post_whole, upstream_headers
from gateway.translate.anthropic import (
    AnthropicStreamTranslator,
    JsonMode,
    split_messages_payload,
    to_chat_completion,
)
from gateway.types import Backend, Endpoint, Payload
from gateway.types.provider_options import anthropic_options
from gateway.upstream import DispatchError, UpstreamReply

API_KEY_HEADER = "x-api-key"  # Anthropic's own; `auth: bearer` sends a bearer token


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
        request, json_mode, beta = _outgoing(backend, endpoint, payload, stream=False)
        body, _ = await post_whole(
            self._pool.session(backend), backend, messages_url(backend),
            orjson.dumps(request), anthropic_headers(backend, request_id, beta),
            lambda status, error: anthropic_error(status, error, backend.name),
        )
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            message = None
        if not isinstance(message, dict) or message.get("type") != "message":
            raise DispatchError(
                UpstreamFailed(f"backend {backend.name} sent a reply that is not a message"),
                retryable=True,
            )
        reply, usage = to_chat_completion(message, json_mode, int(time.time()))
        return UpstreamReply(body=reply, usage=usage)

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamEventStream:
        request, json_mode, beta = _outgoing(backend, endpoint, payload, stream=True)
        resp = await post_stream(
            self._pool.session(backend), backend, messages_url(backend),
            orjson.dumps(request), anthropic_headers(backend, request_id, beta),
            lambda status, error: anthropic_error(status, error, backend.name),
        )
        translator = AnthropicStreamTranslator(json_mode, int(time.time()), backend.name)
        stream = UpstreamEventStream(resp, backend, translator)
        await stream.start()
        return stream

    async def aclose(self) -> None:
        await self._pool.aclose()


def messages_root(base_url: str) -> str:
    """base_url with or without its /v1 (as the policy's OpenAI URLs have it) → .../v1."""
    return base_url if base_url.endswith("/v1") else f"{base_url}/v1"


def messages_url(backend: Backend) -> str:
    return f"{messages_root(backend.base_url)}/messages"


def _outgoing(backend: Backend, endpoint: Endpoint, payload: Payload, *,
              stream: bool) -> tuple[Payload, JsonMode | None, str | None]:
    """The body to send (a copy), how to read its reply, and its anthropic-beta header."""
    if endpoint is not Endpoint.MESSAGES:  # wire.py never sends it another API
        raise DispatchError(
            InvalidRequest(
                f"backend {backend.name} (anthropic) is sent Messages requests only, "
                f"not /v1/{endpoint.value}", code="unsupported_endpoint",
            ),
            retryable=False,
        )
    body, json_mode, beta = split_messages_payload(payload)
    if stream:
        body["stream"] = True
    return body, json_mode, beta


def anthropic_headers(backend: Backend, request_id: str,
                      beta: str | None = None) -> dict[str, str]:
    headers = upstream_headers(backend, request_id, api_key_header=API_KEY_HEADER)
    headers["anthropic-version"] = anthropic_options(backend).anthropic_version
    if beta:
        headers["anthropic-beta"] = beta  # a Claude client's beta features, checked at the door
    return headers
