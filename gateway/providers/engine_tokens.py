"""Exact prompt counts from the backend's own tokenizer, for backends whose policy asks for
them (`tokens: {count: tokenize}`): vLLM's `POST /tokenize` at the server root (chat
template applied), Anthropic's `POST /v1/messages/count_tokens` (the request's Messages
payload, as for a completion). Each is handed the request in the API its backend serves.

Asked only when the estimate says a prompt does not fit the backend's window, so a round
trip is spent where it can turn a refusal into a route. Any failure (timeout, an engine
without the endpoint, a request the translation refuses, a malformed answer) leaves the
estimate in force: never an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

import httpx
import orjson

from gateway.provider_kinds.registry import PROVIDER_KINDS
from gateway.providers.anthropic import anthropic_headers
from gateway.providers.http_pool import upstream_headers
from gateway.types import Backend, Endpoint, Payload

log = logging.getLogger(__name__)
COUNT_TIMEOUT_S = 2.0
# What Anthropic's count_tokens accepts of a Messages request (it refuses max_tokens etc.).
_ANTHROPIC_COUNT_FIELDS = ("model", "messages", "system", "tools", "tool_choice", "thinking")


def vllm_body(backend: Backend, endpoint: Endpoint, payload: Payload) -> dict[str, object] | None:
    """vLLM's request: `messages` (templated as for a chat completion) or `prompt`."""
    if endpoint is Endpoint.CHAT and isinstance(payload.get("messages"), list):
        body: dict[str, object] = {"model": backend.model, "messages": payload["messages"],
                                   "add_generation_prompt": True}
        if payload.get("tools"):
            body["tools"] = payload["tools"]
        return body
    if endpoint is Endpoint.COMPLETIONS and isinstance(payload.get("prompt"), str):
        return {"model": backend.model, "prompt": payload["prompt"]}
    return None  # batches, token ids, embeddings: the estimate stands


def anthropic_body(
    backend: Backend, endpoint: Endpoint, payload: Payload
) -> dict[str, object] | None:
    if endpoint is not Endpoint.MESSAGES or not isinstance(payload.get("messages"), list):
        return None
    return {k: payload[k] for k in _ANTHROPIC_COUNT_FIELDS if k in payload}


class _Dialect(NamedTuple):
    body: Callable[[Backend, Endpoint, Payload], dict[str, object] | None]
    headers: Callable[[Backend, str], dict[str, str]]
    field: str  # where the answer holds the count


# By the kind's `count_api`.
_DIALECTS = {
    "vllm": _Dialect(vllm_body, upstream_headers, "count"),
    "anthropic": _Dialect(anthropic_body, anthropic_headers, "input_tokens"),
}


class EngineTokenCounter:
    """Asks backends for their count; owns no client (the composition root does)."""

    def __init__(self, client: httpx.AsyncClient, timeout_s: float = COUNT_TIMEOUT_S) -> None:
        self._client = client
        self._timeout_s = timeout_s

    async def count(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> int | None:
        if backend.tokenize_url is None:
            return None
        # Asked only when the estimate says a prompt does not fit: a round trip follows, so
        # the kind is looked up here rather than compiled into every Backend.
        kind = PROVIDER_KINDS.get(backend.provider)
        dialect = _DIALECTS.get(kind.count_api or "") if kind is not None else None
        if dialect is None:
            return None
        body = dialect.body(backend, endpoint, payload)
        if body is None:
            return None
        try:
            response = await self._client.post(
                backend.tokenize_url, content=orjson.dumps(body),
                headers=dialect.headers(backend, request_id), timeout=self._timeout_s,
            )
        except httpx.HTTPError as exc:
            log.warning("token count on %s failed (%s); the estimate stands", backend.name,
                        type(exc).__name__)
            return None
        if response.status_code != 200:
            log.warning("token count on %s answered %d; the estimate stands", backend.name,
                        response.status_code)
            return None
        try:
            count = orjson.loads(response.content).get(dialect.field)
        except (orjson.JSONDecodeError, AttributeError):
            count = None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            log.warning("token count on %s gave no count; the estimate stands", backend.name)
            return None
        return count
