"""The Anthropic-compatible front door: POST /v1/messages and /v1/messages/count_tokens.

Claude-SDK applications point at the gateway (tenant key as `x-api-key` or bearer). Requests
take the same path as OpenAI ones (authenticate, classify, decide, reserve, dispatch, settle,
record) and may be answered by any backend; replies, stream events and errors are
Anthropic-shaped, with the `request-id` header the SDK reads.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import orjson
from fastapi import APIRouter
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from gateway.api import openapi_bodies as bodies
from gateway.api.auth import authenticate_tenant
from gateway.api.body_gate import body_gate
from gateway.api.errors import log_internal
from gateway.api.openai import ClientGone, cancel_on_disconnect
from gateway.api.parsing import check_writable, load_json, read_body
from gateway.api.parts import components_of
from gateway.api.sse_response import SSEResponse
from gateway.api.translated_stream import TranslatedStream
from gateway.components import Components
from gateway.errors import GatewayError, InternalError, ModelNotFound
from gateway.routing.service import Completed, Streaming
from gateway.translate.anthropic import (
    AnthropicEventEncoder,
    error_body,
    message_id,
    split_extensions,
    to_anthropic_message,
    to_chat_payload,
)
from gateway.types import Endpoint, EntryPoint, RouteRequest, TenantContext

log = logging.getLogger("gateway.api")
router = APIRouter()


def _anthropic_errors(
    handler: Callable[[Request, str], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """Every error from these routes is rendered the way Anthropic renders it."""

    async def handle(request: Request) -> Response:
        request_id: str = request.state.request_id
        try:
            return await handler(request, request_id)
        except GatewayError as exc:
            log_internal(exc, request.method, request.url.path, request_id)
            error = exc
        except ClientDisconnect:
            log.info("client disconnected before its request body arrived: %s %s "
                     "(request %s)", request.method, request.url.path, request_id)
            return Response(status_code=499)  # never sent: nobody is listening
        except Exception:
            log.exception("unhandled error on %s (request %s)", request.url.path, request_id)
            error = InternalError("the gateway hit an internal error")
        headers = {**error.headers(), "request-id": request_id}
        return Response(error_body(error, request_id), status_code=error.status,
                        media_type="application/json", headers=headers)

    return handle


async def _parse(
    request: Request, request_id: str, *, counting: bool = False
) -> tuple[Components, TenantContext, RouteRequest]:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    raw = await read_body(request, parts.edge.max_body_bytes,
                          parts.edge.body_read_timeout_s, body_gate(request))
    body = load_json(raw)
    if counting and isinstance(body, dict):
        body = {**body, "max_tokens": 1}  # count_tokens takes no max_tokens
    extended = to_chat_payload(body, request.headers.get("anthropic-beta"))
    check_writable(raw, extended)  # as translated: that is what is written to a backend
    # Routed without what only a translation reads (thinking, the beta header): kept aside.
    payload, forms = split_extensions(extended)
    tags = request.headers.get("x-gateway-tags")
    route_request = RouteRequest(
        request_id=request_id,
        endpoint=Endpoint.CHAT,
        entry=EntryPoint.MESSAGES,
        model=payload["model"],
        payload=payload,
        stream=bool(payload.get("stream")),
        include_usage=True,  # message_delta carries the usage
        max_output_tokens=None if counting else payload["max_tokens"],
        tags=tuple(t.strip() for t in tags.split(",") if t.strip()) if tags else (),
        session_id=(request.headers.get("x-session-id") or "")[:256] or None,
        forms=forms,
    )
    return parts, tenant, route_request


@_anthropic_errors
async def create_message(request: Request, request_id: str) -> Response:
    parts, tenant, route_request = await _parse(request, request_id)
    if route_request.stream:
        streaming = await parts.routing.handle(tenant, route_request, request.headers)
        assert isinstance(streaming, Streaming)
        encoder = AnthropicEventEncoder(route_request.model, message_id(request_id))
        headers = {**streaming.headers, "request-id": request_id}
        return SSEResponse(TranslatedStream(streaming.body, encoder), headers)
    try:
        result = await cancel_on_disconnect(
            request.receive, parts.routing.handle(tenant, route_request, request.headers)
        )
    except ClientGone:
        return Response(status_code=499)
    assert isinstance(result, Completed)
    message = to_anthropic_message(orjson.loads(result.body), route_request.model)
    return Response(orjson.dumps(message), media_type="application/json",
                    headers={**result.headers, "request-id": request_id})


@_anthropic_errors
async def count_tokens(request: Request, request_id: str) -> Response:
    parts, tenant, route_request = await _parse(request, request_id, counting=True)
    policy = parts.policy.current
    allowed = policy.tenant_models.get(tenant.tenant_name)
    if policy.pool(route_request.model) is None or (
        allowed is not None and route_request.model not in allowed
    ):
        raise ModelNotFound(f"model: {route_request.model}", param="model")
    # An exact count in OpenAI's o200k encoding: Claude's own tokenizer is not public.
    profile = await parts.classifier.profile(route_request, (0,))
    return Response(orjson.dumps({"input_tokens": profile.prompt_tokens}),
                    media_type="application/json", headers={"request-id": request_id})


router.add_api_route("/v1/messages", create_message, methods=["POST"], response_model=None,
                     openapi_extra=bodies.MESSAGES)
router.add_api_route("/v1/messages/count_tokens", count_tokens, methods=["POST"],
                     response_model=None, openapi_extra=bodies.COUNT_TOKENS)

# Served by the ASGI front door (api/hot_path.py) like the OpenAI inference routes.
HOT_ROUTES = {
    ("POST", "/v1/messages"): create_message,
    ("POST", "/v1/messages/count_tokens"): count_tokens,
}
