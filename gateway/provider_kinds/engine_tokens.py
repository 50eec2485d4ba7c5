"""Exact prompt counts from the backend's own tokenizer, for backends whose policy asks for
them (`tokens: {count: tokenize}`), asked as the backend's kind registered it
(`ProviderKind.token_count`): vLLM's `POST /tokenize` at the server root (chat template
applied), Anthropic's `POST /v1/messages/count_tokens` (the request translated as for a
completion).

Asked only when the estimate says a prompt does not fit the backend's window, so a round
trip is spent where it can turn a refusal into a route. Any failure (timeout, an engine
without the endpoint, a request the translation refuses, a malformed answer) leaves the
estimate in force: never an error.
"""

from __future__ import annotations

import logging

import httpx
import orjson

from gateway.provider_kinds.registry import PROVIDER_KINDS, ProviderKinds
from gateway.types import Backend, Endpoint, Payload

log = logging.getLogger(__name__)
COUNT_TIMEOUT_S = 2.0


class EngineTokenCounter:
    """Asks backends for their count; owns no client (the composition root does)."""

    def __init__(self, client: httpx.AsyncClient, timeout_s: float = COUNT_TIMEOUT_S,
                 kinds: ProviderKinds = PROVIDER_KINDS) -> None:
        self._client = client
        self._timeout_s = timeout_s
        self._kinds = kinds

    async def count(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> int | None:
        if backend.tokenize_url is None:
            return None
        # Asked only when the estimate says a prompt does not fit: a round trip follows, so
        # the kind is looked up here rather than compiled into every Backend.
        kind = self._kinds.get(backend.provider)
        dialect = kind.token_count if kind is not None else None
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
            count = orjson.loads(response.content).get(dialect.answer_field)
        except (orjson.JSONDecodeError, AttributeError):
            count = None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            log.warning("token count on %s gave no count; the estimate stands", backend.name)
            return None
        return count
