"""Azure OpenAI: deployment URLs or the v1 path, `api-key` or bearer auth, and its quirks made
invisible to OpenAI clients (the empty-`choices` first stream chunk, typeless errors with
numeric codes, content-filter errors whose details sit in `innererror`).

Classic: `{base_url}/openai/deployments/{deployment}/{endpoint}?api-version=...` (the body's
`model` is ignored by Azure). v1: `base_url` ends in `/openai/v1`; the body's `model` is the
deployment name and `api-version` is optional. Responses API requests (passed through) go to
`{base_url}/openai/responses` with the deployment as the body's `model`; Azure serves them from
api-version 2025-03-01-preview on (an older one: set `responses_api: translate`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import orjson

from gateway.errors import GatewayError, UpstreamRejected
from gateway.providers.openai_compat import Dialect
from gateway.providers.openai_hygiene import clean_for_openai
from gateway.providers.upstream_errors import normalise_upstream_error
from gateway.types import Backend, Endpoint, Payload
from gateway.types.provider_options import azure_options

API_KEY_HEADER = "api-key"  # Azure's own; `auth: bearer` sends an Entra ID token
# Azure's codes are often the HTTP status as a string ("429"); clients key on OpenAI's.
_CODE_BY_STATUS = {429: "rate_limit_exceeded", 401: "invalid_api_key", 404: "not_found"}


class AzureDialect(Dialect):
    def url(self, backend: Backend, endpoint: Endpoint) -> str:
        return azure_url(backend, endpoint)

    # `api-key` by default; `auth: bearer` sends a Microsoft Entra ID token the OpenAI way.
    api_key_header = API_KEY_HEADER

    def prepare(self, backend: Backend, endpoint: Endpoint, body: Payload) -> None:
        if endpoint is Endpoint.RESPONSES:
            # Azure's Responses API is not under a deployment: the body names it.
            deployment = azure_options(backend).deployment
            if deployment:
                body["model"] = deployment
            return
        clean_for_openai(body, backend)

    def translator(self, backend: Backend) -> AzureStreamNormaliser:
        return AzureStreamNormaliser()

    def error(self, status: int, body: bytes, backend: Backend) -> tuple[GatewayError, bool]:
        return azure_error(status, body, backend.name)


def azure_url(backend: Backend, endpoint: Endpoint) -> str:
    base = backend.base_url
    options = azure_options(backend)
    if options.deployment:
        root = base if base.endswith("/openai") else f"{base}/openai"
        url = (f"{root}/responses" if endpoint is Endpoint.RESPONSES else
               f"{root}/deployments/{quote(options.deployment, safe='')}/{endpoint.value}")
    else:
        url = f"{base}/{endpoint.value}"
    if options.api_version:
        url += f"?api-version={quote(options.api_version, safe='')}"
    return url


class AzureStreamNormaliser:
    """Drops the `choices: []` chunks Azure sends for prompt filter results (clients that
    read `choices[0]` crash on them) but keeps the usage chunk, and gives every choice a
    `delta` (Azure's content-filter annotations sometimes come without one)."""

    ready = True

    def feed(self, data: bytes) -> list[bytes]:
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            return [data]
        if not isinstance(chunk, dict) or "error" in chunk:
            return [data]
        choices = chunk.get("choices")
        if choices == []:
            return [data] if chunk.get("usage") else []
        if isinstance(choices, list) and any(
            isinstance(c, dict) and "delta" not in c for c in choices
        ):
            for choice in choices:
                if isinstance(choice, dict):
                    choice.setdefault("delta", {})
            return [orjson.dumps(chunk)]
        return [data]

    def finish(self) -> list[bytes]:
        return []


def azure_error(status: int, body: bytes, backend: str) -> tuple[GatewayError, bool]:
    inner = _error_object(body)
    if status == 400 and inner.get("code") == "content_filter":
        return _content_filter_error(inner), False
    err, retryable = normalise_upstream_error(status, body, backend)
    if err.code is not None and err.code.isdigit():
        err.code = _CODE_BY_STATUS.get(status, "upstream_unavailable" if retryable else None)
    return err, retryable


def _content_filter_error(inner: dict[str, Any]) -> GatewayError:
    message = str(inner.get("message") or "The prompt was filtered by Azure's content policy.")
    detail = inner.get("innererror")
    if isinstance(detail, dict):
        results = detail.get("content_filter_result")
        if isinstance(results, dict):
            hit = sorted(
                name for name, r in results.items() if isinstance(r, dict) and r.get("filtered")
            )
            if hit:
                message += f" (filtered categories: {', '.join(hit)})"
    param = inner.get("param")
    return UpstreamRejected(
        message,
        status=400,
        error_type="invalid_request_error",
        param=param if isinstance(param, str) else "prompt",
        code="content_filter",
    )


def _error_object(body: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return {}
    if isinstance(obj, dict) and isinstance(obj.get("error"), dict):
        return obj["error"]
    return {}
