"""The Responses API front door: POST /v1/responses, GET and DELETE /v1/responses/{id}.

A Responses request takes the same path as a chat completion (authenticate, classify,
decide, reserve, dispatch, settle, record): it is translated to the chat payload the gateway
routes and the reply or stream is translated back (gateway/translate/responses.py), so any
backend can serve it. A backend that serves /v1/responses itself is sent the request as such
(responses_passthrough.py).

Conversation state: with `store` (default true) the response and the items it was given are
kept in the gateway's database for the tenant that made it, so `previous_response_id` can
continue it. Only tenants whose policy says `store_content: full` get that: keeping a
conversation means keeping its content, which `none` forbids and `redacted` would corrupt.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from datetime import timedelta
from typing import Any

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from gateway.api import openapi_bodies as bodies
from gateway.api.auth import authenticate_tenant
from gateway.api.body_gate import body_gate
from gateway.api.openai import ClientGone, cancel_on_disconnect
from gateway.api.parsing import load_json, read_body
from gateway.api.parts import components_of
from gateway.api.responses_input_items import input_items_page
from gateway.api.responses_passthrough import PassthroughStream
from gateway.api.sse_response import SSEResponse
from gateway.api.translated_stream import TranslatedStream
from gateway.components import Components
from gateway.errors import (
    DatabaseUnavailable,
    GatewayError,
    InvalidRequest,
    NotFound,
    UpstreamFailed,
)
from gateway.policy.tenants import StoreContent
from gateway.routing.service import Completed, Streaming
from gateway.translate.responses import (
    ResponsesEventEncoder,
    ResponsesRequest,
    Untranslatable,
    adopt,
    native_payload,
    new_id,
    parse_responses_request,
    to_chat_payload,
    to_response,
)
from gateway.types import Endpoint, EntryPoint, RouteRequest, TenantContext, WireForms

log = logging.getLogger("gateway.api")
router = APIRouter()

STATE_REFUSED = {
    "none": "the tenant's policy keeps no conversation content (store_content: none), so "
            "the gateway stores no responses to continue; send the whole conversation in "
            "`input` instead",
    "redacted": "the tenant's policy keeps conversation content only redacted "
                "(store_content: redacted), and continuing from placeholders would change "
                "the conversation; send the whole conversation in `input` instead",
}


# Chat payload fields (as a backend's refusal names them) → the Responses parameter sent.
RESPONSES_NAMES = {"reasoning_effort": "reasoning.effort", "max_tokens": "max_output_tokens",
                   "max_completion_tokens": "max_output_tokens",
                   "response_format": "text.format", "messages": "input"}


def _store_mode(parts: Components, tenant: TenantContext) -> StoreContent:
    return parts.policy.current.tenant(tenant.tenant_name).store_content


async def create_response(request: Request) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    raw = await read_body(request, parts.edge.max_body_bytes,
                          parts.edge.body_read_timeout_s, body_gate(request))
    body = load_json(raw)
    # What chat completions cannot carry (built-in tools, ...) leaves the request to backends
    # that serve the Responses API; the chat form without it is still what gets classified.
    only: Untranslatable | None = None
    try:
        parsed = parse_responses_request(body)
    except Untranslatable as exc:
        only, parsed = exc, parse_responses_request(body, strict=False)
    mode = _store_mode(parts, tenant)
    history = await _history(parts, tenant, parsed, mode)
    try:
        payload = to_chat_payload(parsed, history, strict=only is None)
    except Untranslatable as exc:
        only, payload = exc, to_chat_payload(parsed, history, strict=False)
    store = parsed.store and mode is StoreContent.FULL and parts.responses is not None
    request_id: str = request.state.request_id
    tags = request.headers.get("x-gateway-tags")
    route_request = RouteRequest(
        request_id=request_id,
        endpoint=Endpoint.CHAT,
        entry=EntryPoint.RESPONSES,
        model=parsed.model,
        payload=payload,
        stream=parsed.stream,
        include_usage=True,  # response.completed carries the usage
        max_output_tokens=payload.get("max_tokens"),
        tags=tuple(t.strip() for t in tags.split(",") if t.strip()) if tags else (),
        session_id=(request.headers.get("x-session-id") or "")[:256] or None,
        forms=WireForms(
            native=(Endpoint.RESPONSES, native_payload(parsed, history)),
            untranslatable=(only.param or "input", only.message) if only is not None else None,
        ),
    )
    context = [*history, *parsed.input_items]
    response_id = new_id("resp")
    if parsed.stream:
        streaming = await _handled(parts.routing.handle(tenant, route_request, request.headers))
        assert isinstance(streaming, Streaming)

        async def keep(response: dict[str, Any]) -> None:
            await _save(parts, tenant, context, response)

        on_end = keep if store else None
        if streaming.endpoint is Endpoint.RESPONSES:
            return SSEResponse(PassthroughStream(streaming.body, response_id, parsed.echo,
                                                 parsed.model, store=store, on_end=on_end),
                               streaming.headers)
        encoder = ResponsesEventEncoder(response_id, parsed.echo, parsed.model, store=store)

        async def keep_final() -> None:
            if encoder.final is not None:
                await keep(encoder.final)

        return SSEResponse(TranslatedStream(streaming.body, encoder,
                                            keep_final if store else None), streaming.headers)
    try:
        result = await cancel_on_disconnect(request.receive, _handled(
            parts.routing.handle(tenant, route_request, request.headers)))
    except ClientGone:
        return Response(status_code=499)
    assert isinstance(result, Completed)
    try:
        body = orjson.loads(result.body)
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise UpstreamFailed(f"backend {result.headers.get('x-gateway-backend')} sent a reply "
                             "that is not a JSON object")
    response = (
        adopt(body, response_id, parsed.echo, parsed.model, store=store)
        if result.endpoint is Endpoint.RESPONSES
        else to_response(body, response_id, parsed.echo, parsed.model, store=store)
    )
    if store:
        await _save(parts, tenant, context, response)
    return Response(orjson.dumps(response), media_type="application/json",
                    headers=result.headers)


async def _handled(work: Awaitable[Completed | Streaming]) -> Completed | Streaming:
    """Refusals name what the client sent: a Responses parameter, not its chat translation."""
    try:
        return await work
    except GatewayError as exc:
        name = exc.param.partition(".")[0] if exc.param else None
        if name in RESPONSES_NAMES:
            exc.param = RESPONSES_NAMES[name] + exc.param[len(name):]  # type: ignore[index]
            exc.message = exc.message.replace(f"'{name}'", f"'{RESPONSES_NAMES[name]}'")
        raise


async def _history(parts: Components, tenant: TenantContext, parsed: ResponsesRequest,
                   mode: StoreContent) -> list[dict[str, Any]]:
    previous = parsed.previous_response_id
    if previous is None:
        return []
    if mode is not StoreContent.FULL or parts.responses is None:
        raise InvalidRequest(f"previous_response_id cannot be used: "
                             f"{STATE_REFUSED.get(mode, STATE_REFUSED['none'])}",
                             param="previous_response_id", code="conversation_state_disabled")
    stored = await parts.responses.get(tenant.tenant_id, previous)
    if stored is None:
        raise NotFound(f"Previous response with id '{previous}' not found.",
                       param="previous_response_id", code="previous_response_not_found")
    return stored.conversation()


async def _save(parts: Components, tenant: TenantContext,
                context: list[dict[str, Any]], response: dict[str, Any]) -> None:
    """Keep the response (for the tenant's own retention, where its policy sets one); if the
    database cannot, the client (already served and billed) still gets its answer, marked
    `store: false` so nobody relies on continuing it."""
    repository = parts.responses
    assert repository is not None
    kept_s = parts.policy.current.tenant(tenant.tenant_name).responses_retention_s
    try:
        await repository.save(tenant.tenant_id, context, response,
                              None if kept_s is None else timedelta(seconds=kept_s))
    except DatabaseUnavailable:
        log.warning("response %s not stored: the database is unavailable", response["id"])
        response["store"] = False


async def retrieve_response(request: Request, response_id: str) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    if request.query_params.get("stream") in ("true", "1"):
        raise InvalidRequest("stream: replaying a stored response as a stream is not "
                             "supported by the gateway", param="stream",
                             code="unsupported_parameter")
    stored = (await parts.responses.get(tenant.tenant_id, response_id)
              if parts.responses is not None else None)
    if stored is None:
        raise _missing(response_id)
    return Response(orjson.dumps(stored.response), media_type="application/json")


async def list_input_items(request: Request, response_id: str) -> Response:
    """The items the response was given (the stored conversation, then its own input), as
    `client.responses.input_items.list` pages them: `order` (desc by default), `after`,
    `limit` (1–100, default 20)."""
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    stored = (await parts.responses.get(tenant.tenant_id, response_id)
              if parts.responses is not None else None)
    if stored is None:
        raise _missing(response_id)
    page = input_items_page(stored.id, stored.context, request.query_params.get("order"),
                            request.query_params.get("after"),
                            request.query_params.get("limit"))
    return Response(orjson.dumps(page), media_type="application/json")


async def delete_response(request: Request, response_id: str) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    deleted = (await parts.responses.delete(tenant.tenant_id, response_id)
               if parts.responses is not None else False)
    if not deleted:
        raise _missing(response_id)
    return Response(orjson.dumps({"id": response_id, "object": "response.deleted",
                                  "deleted": True}), media_type="application/json")


def _missing(response_id: str) -> NotFound:
    # The same answer for an unknown id and another tenant's: ids are not disclosed.
    return NotFound(f"No response found with id '{response_id}'.", param="response_id",
                    code="response_not_found")


for prefix, documented in (("/v1", True), ("", False)):  # also without /v1, as chat is
    router.add_api_route(f"{prefix}/responses", create_response, methods=["POST"],
                         response_model=None, include_in_schema=documented,
                         openapi_extra=bodies.RESPONSES)
    router.add_api_route(f"{prefix}/responses/{{response_id}}", retrieve_response,
                         methods=["GET"], response_model=None, include_in_schema=documented)
    router.add_api_route(f"{prefix}/responses/{{response_id}}", delete_response,
                         methods=["DELETE"], response_model=None, include_in_schema=documented)
    router.add_api_route(f"{prefix}/responses/{{response_id}}/input_items", list_input_items,
                         methods=["GET"], response_model=None, include_in_schema=documented)

# Served by the ASGI front door (api/hot_path.py) like the other inference routes.
HOT_ROUTES = {("POST", "/v1/responses"): create_response, ("POST", "/responses"): create_response}
