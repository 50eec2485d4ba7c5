"""Anthropic's error bodies → the client's OpenAI-shaped error, and whether to fail over."""

from __future__ import annotations

import orjson

from gateway.errors import GatewayError, UpstreamFailed, UpstreamRejected
from gateway.providers.upstream_errors import normalise_upstream_error
from gateway.translate.anthropic_vocabulary import OPENAI_ERRORS


def anthropic_error(status: int, body: bytes, backend: str) -> tuple[GatewayError, bool]:
    """`{"type":"error","error":{"type","message"}}` → the client's error, and failover or not.

    429 and 529 (overloaded) may succeed elsewhere; 401/403/404 concern the gateway's own key
    or model name, so they fail over too and are never shown as the client's auth failure.
    400 and 413 are about the request: same status, OpenAI's type and code.
    """
    kind, message = _error_fields(body)
    if status == 529 or kind == "overloaded_error":
        return UpstreamFailed(
            f"backend {backend} is overloaded (HTTP {status}): {message}", code="overloaded"
        ), True
    if status == 429:
        return UpstreamFailed(
            f"backend {backend} rate-limited the gateway: {message}",
            code="rate_limit_exceeded", status=429, error_type="rate_limit_error",
        ), True
    err, retryable = normalise_upstream_error(status, body, backend)
    if retryable or kind not in OPENAI_ERRORS:
        return err, retryable
    error_type, code = OPENAI_ERRORS[kind]
    return UpstreamRejected(
        message, status=status if status in (400, 413) else 400, error_type=error_type,
        code=code,
    ), False


def _error_fields(body: bytes) -> tuple[str | None, str]:
    try:
        obj = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        obj = None
    inner = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(inner, dict):
        kind = inner.get("type")
        return (kind if isinstance(kind, str) else None), str(inner.get("message") or "")
    return None, body.decode("utf-8", "replace").strip()[:500]
