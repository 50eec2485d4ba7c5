"""Upstream error bodies of every dialect → the OpenAI error shape, and whether to fail over.

vLLM (≥0.10.1) sends `{"error": {..., "code": 400}}` with an integer code and a class name as
type; older vLLM sends a flat `{"object": "error", ...}`; other servers send plain text.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.errors import GatewayError, UpstreamFailed, UpstreamRejected

# 408/429/5xx: the upstream could not serve it now; another backend may.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
# The backend's own configuration is wrong (our key, our model name): try another, and never
# tell the client its key is bad when it was the gateway's upstream key.
MISCONFIGURED_STATUSES = frozenset({401, 403, 404})

_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}


def parse_error_body(status: int, body: bytes) -> tuple[str, str | None, str | None, str | None]:
    """(message, type, param, code) from any dialect; code is always a string or None."""
    obj: Any = None
    try:
        obj = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        inner = obj.get("error") if isinstance(obj.get("error"), dict) else obj
        message = inner.get("message") or inner.get("detail") or ""
        if not isinstance(message, str):
            message = orjson.dumps(message).decode()
        etype = inner.get("type")
        param = inner.get("param")
        code = inner.get("code")
        return (
            message or f"upstream returned HTTP {status}",
            etype if isinstance(etype, str) else None,
            param if isinstance(param, str) else None,
            _string_code(code, message),
        )
    text = body.decode("utf-8", "replace").strip()[:500]
    return text or f"upstream returned HTTP {status}", None, None, None


def normalise_upstream_error(status: int, body: bytes, backend: str) -> tuple[GatewayError, bool]:
    """The error to show the client and whether another candidate may be tried."""
    message, etype, param, code = parse_error_body(status, body)
    if status in RETRYABLE_STATUSES or status >= 500:
        err = UpstreamFailed(
            f"backend {backend} failed (HTTP {status}): {message}",
            code=code or "upstream_unavailable",
            status=429 if status == 429 else 502,
            error_type="rate_limit_error" if status == 429 else "upstream_error",
        )
        return err, True
    if status in MISCONFIGURED_STATUSES:
        # A 401/403 body may quote (part of) the gateway's own key: never pass it on.
        detail = f": {message}" if status == 404 else ""
        err = UpstreamFailed(
            f"backend {backend} rejected the gateway's request (HTTP {status}){detail}",
            code="upstream_misconfigured",
        )
        return err, True
    return (
        UpstreamRejected(
            message,
            status=status if 400 <= status < 500 else 502,
            error_type=_openai_type(status, etype),
            param=param,
            code=code,
        ),
        False,
    )


def _openai_type(status: int, upstream_type: str | None) -> str:
    # OpenAI types are snake_case (`invalid_request_error`); vLLM sends Python class names.
    if upstream_type and upstream_type.islower() and " " not in upstream_type:
        return upstream_type
    return _TYPE_BY_STATUS.get(status, "invalid_request_error")


def _string_code(code: Any, message: str) -> str | None:
    if "maximum context length" in message or "context length" in message.lower():
        return "context_length_exceeded"
    if code is None:
        return None
    return str(code)
