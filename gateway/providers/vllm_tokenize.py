"""Exact prompt counts from a vLLM server's own tokenizer: `POST /tokenize` at the server
root, with the chat template applied, for backends whose policy asks for it
(`tokens: {count: tokenize}`).

Asked only when the estimate says a prompt does not fit the backend's window, so a round
trip is spent where it can turn a refusal into a route. Any failure (timeout, an engine
without the endpoint, a malformed answer) leaves the estimate in force: never an error.
"""

from __future__ import annotations

import logging

import httpx
import orjson

from gateway.providers.http_pool import upstream_headers
from gateway.types import Backend, Endpoint, Payload

log = logging.getLogger(__name__)
TOKENIZE_TIMEOUT_S = 2.0


def tokenize_body(
    backend: Backend, endpoint: Endpoint, payload: Payload
) -> dict[str, object] | None:
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


class EngineTokenCounter:
    """Asks engines for their count; owns no client (the composition root does)."""

    def __init__(self, client: httpx.AsyncClient, timeout_s: float = TOKENIZE_TIMEOUT_S) -> None:
        self._client = client
        self._timeout_s = timeout_s

    async def count(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> int | None:
        body = tokenize_body(backend, endpoint, payload)
        if body is None or backend.tokenize_url is None:
            return None
        try:
            response = await self._client.post(
                backend.tokenize_url, content=orjson.dumps(body),
                headers=upstream_headers(backend, request_id), timeout=self._timeout_s,
            )
        except httpx.HTTPError as exc:
            log.warning("tokenize on %s failed (%s); the estimate stands", backend.name,
                        type(exc).__name__)
            return None
        if response.status_code != 200:
            log.warning("tokenize on %s answered %d; the estimate stands", backend.name,
                        response.status_code)
            return None
        try:
            count = orjson.loads(response.content).get("count")
        except (orjson.JSONDecodeError, AttributeError):
            count = None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            log.warning("tokenize on %s gave no count; the estimate stands", backend.name)
            return None
        return count
