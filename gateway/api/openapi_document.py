"""The OpenAPI document as the gateway really answers.

FastAPI documents a 200 (and a 422 it never sends: validation errors are rendered as 400) per
route. Every authenticated operation can also answer 400, 401, 403, 404, 408, 413, 429 and
the 5xx of a failed upstream or an unavailable store, all in the error shape both front doors
share (`{"error": {"message", "type", ...}}`); 429s and 503s carry `retry-after`. Inference
operations stream as `text/event-stream`, reports as CSV on request. Who may call what is
declared as security schemes: the tenant key (bearer, or `x-api-key` on the Anthropic door)
and the admin key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["message", "type"],
        "properties": {"message": {"type": "string"}, "type": {"type": "string"},
                       "param": {"type": ["string", "null"]},
                       "code": {"type": ["string", "null"]}},
    }},
}
ERRORS = {
    "400": "the request is malformed or asks for something the route cannot serve",
    "401": "missing or unknown key",
    "403": "the key may not do this (disabled tenant, model not allowed)",
    "404": "no such model, response or resource",
    "408": "the request body did not arrive in time",
    "413": "the request body is over GATEWAY_MAX_BODY_BYTES",
    "429": "a rate limit or budget is spent",
    "500": "the gateway hit an internal error",
    "502": "every candidate backend failed",
    "503": "the gateway is busy, or a store it needs is unavailable",
    "504": "the backend did not answer in time",
}
RETRY_AFTER = {"retry-after": {"description": "seconds to wait before retrying",
                               "schema": {"type": "string"}}}
STREAMING = ("/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/responses")
PUBLIC = ("/healthz", "/readyz", "/health", "/metrics")
SECURITY_SCHEMES = {
    "tenantKey": {"type": "http", "scheme": "bearer",
                  "description": "a tenant's API key (`gateway keys create`)"},
    "tenantApiKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key",
                           "description": "a tenant's API key, as Anthropic clients send it"},
    "adminKey": {"type": "http", "scheme": "bearer", "description": "GATEWAY_ADMIN_KEY"},
}


def truthful_openapi(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """A replacement for `app.openapi`: FastAPI's document, completed once, then cached."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            complete(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    return build


def complete(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    components["securitySchemes"] = SECURITY_SCHEMES
    for schema_name in ("HTTPValidationError", "ValidationError"):
        components["schemas"].pop(schema_name, None)
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            _complete_operation(path, operation)


def _complete_operation(path: str, operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    responses.pop("422", None)  # validation errors are rendered as 400
    ok = next((responses[s] for s in ("200", "201") if s in responses), None)
    if ok is not None:
        content = ok.setdefault("content", {"application/json": {"schema": {}}})
        if path in STREAMING:
            content["text/event-stream"] = {"schema": {"type": "string"}}
        if any(p.get("name") == "format" for p in operation.get("parameters", ())):
            content["text/csv"] = {"schema": {"type": "string"}}
    if path in PUBLIC:
        if path == "/readyz":
            responses.setdefault("503", _error("a dependency is not ready"))
        return
    for status, description in ERRORS.items():
        responses.setdefault(status, _error(description))
    for status in ("429", "503"):
        responses[status]["headers"] = RETRY_AFTER
    if path.startswith("/admin"):
        operation["security"] = [{"adminKey": []}]
        if "201" in responses:  # creating what exists
            responses.setdefault("409", _error("it exists already"))
    elif path.startswith("/v1/messages"):
        operation["security"] = [{"tenantKey": []}, {"tenantApiKeyHeader": []}]
    else:
        operation["security"] = [{"tenantKey": []}]


def _error(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
