"""OpenAI-compatible upstreams (vLLM, OpenAI, Azure, any `/v1/chat/completions` server), aiohttp.

Why aiohttp and not httpx here: on this class of machine a pass-through proxy with httpx's
default transport spent ~10x the CPU per request of the same proxy with aiohttp's client
(see benchmarks/RESULTS.md). The request path is the one place that cost matters.

What differs between members of the family (URL layout, auth header, body rules, stream
quirks, error dialect) is a `Dialect`; the transport is the same. The body is re-serialised
once with orjson after the dialect's changes; every other field reaches the backend as the
client sent it.
"""

from __future__ import annotations

import orjson

from gateway.errors import GatewayError
from gateway.providers.event_stream import EventTranslator, UpstreamEventStream
from gateway.providers.http_pool import (
    SessionPool,
    post_stream,
    post_whole,
    upstream_headers,
)
from gateway.providers.openai_hygiene import clean_for_openai, rename_max_tokens
from gateway.providers.upstream_errors import normalise_upstream_error
from gateway.translate.token_counts import token_count
from gateway.types import Backend, Endpoint, Payload, Usage
from gateway.types.provider_options import family_options
from gateway.upstream import UpstreamReply


class Dialect:
    """vLLM and other OpenAI-compatible servers: `{base_url}/{endpoint}`, bearer key, the body
    as sent. Subclasses (OpenAI, Azure) override what their API does differently."""

    def url(self, backend: Backend, endpoint: Endpoint) -> str:
        return f"{backend.base_url}/{endpoint.value}"

    # The API's own key header, used when the backend's auth is `api_key` (else bearer).
    api_key_header: str | None = None

    def headers(self, backend: Backend, request_id: str) -> dict[str, str]:
        return upstream_headers(backend, request_id, api_key_header=self.api_key_header)

    def prepare(self, backend: Backend, endpoint: Endpoint, body: Payload) -> None:
        """Adjust the (copied) body in place for this upstream."""
        field = family_options(backend).max_tokens_field
        if field != "auto" and endpoint is not Endpoint.RESPONSES:
            rename_max_tokens(body, field)

    def translator(self, backend: Backend) -> EventTranslator | None:
        return None

    def error(self, status: int, body: bytes, backend: Backend) -> tuple[GatewayError, bool]:
        return normalise_upstream_error(status, body, backend.name)


class OpenAIDialect(Dialect):
    """api.openai.com: the same wire format, stricter about the body (openai_hygiene.py)."""

    def prepare(self, backend: Backend, endpoint: Endpoint, body: Payload) -> None:
        if endpoint is not Endpoint.RESPONSES:  # its own field names: nothing to fix
            clean_for_openai(body, backend)


class OpenAICompatProvider:
    def __init__(
        self,
        *,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 300.0,
        max_connections: int = 512,
        dialect: Dialect | None = None,
    ) -> None:
        self._pool = SessionPool(
            connect_timeout_s=connect_timeout_s,
            read_timeout_s=read_timeout_s,
            max_connections=max_connections,
        )
        self._dialect = dialect or Dialect()

    def _body(self, backend: Backend, endpoint: Endpoint, payload: Payload, *,
              stream: bool) -> bytes:
        body = dict(payload)
        body["model"] = backend.model
        if stream and endpoint is not Endpoint.RESPONSES:  # response.completed has usage
            # Ask for usage even when the client did not: it is how cost gets settled. The
            # relay drops the extra usage chunk for clients that did not ask.
            options = body.get("stream_options")
            options = dict(options) if isinstance(options, dict) else {}
            options["include_usage"] = True
            body["stream_options"] = options
        self._dialect.prepare(backend, endpoint, body)
        return orjson.dumps(body)

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        dialect = self._dialect
        body, content_type = await post_whole(
            self._pool.session(backend), backend, dialect.url(backend, endpoint),
            self._body(backend, endpoint, payload, stream=False),
            dialect.headers(backend, request_id),
            lambda status, error: dialect.error(status, error, backend),
        )
        return UpstreamReply(body=body, usage=usage_from_body(body), content_type=content_type)

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamEventStream:
        dialect = self._dialect
        resp = await post_stream(
            self._pool.session(backend), backend, dialect.url(backend, endpoint),
            self._body(backend, endpoint, payload, stream=True),
            dialect.headers(backend, request_id),
            lambda status, error: dialect.error(status, error, backend),
        )
        stream = UpstreamEventStream(resp, backend, dialect.translator(backend))
        await stream.start()
        return stream

    async def aclose(self) -> None:
        await self._pool.aclose()


def usage_from_body(body: bytes) -> Usage | None:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return usage_from_obj(obj.get("usage")) if isinstance(obj, dict) else None


def usage_from_obj(usage: object) -> Usage | None:
    """Chat and completions usage, or the Responses API's (input/output tokens)."""
    if not isinstance(usage, dict):
        return None
    responses = "input_tokens" in usage and "prompt_tokens" not in usage
    details = usage.get("input_tokens_details" if responses else "prompt_tokens_details")
    if not isinstance(details, dict):
        details = {}
    return Usage(
        prompt_tokens=token_count(usage.get("input_tokens" if responses else "prompt_tokens")),
        completion_tokens=token_count(
            usage.get("output_tokens" if responses else "completion_tokens")),
        cached_tokens=token_count(details.get("cached_tokens")),
        cache_write_tokens=token_count(details.get("cache_write_tokens")),
    )
