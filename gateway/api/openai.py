"""The OpenAI-compatible surface: /v1/chat/completions, /v1/completions, /v1/embeddings,
/v1/models (also served without the /v1 prefix, as many clients call it that way).

Handlers stay short: authenticate, parse, hand to the routing service, render.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive

from gateway.api import openapi_bodies as bodies
from gateway.api.auth import authenticate_tenant
from gateway.api.body_gate import body_gate
from gateway.api.hot_path import WholeReply
from gateway.api.parsing import parse_route_request, read_body
from gateway.api.parts import components_of
from gateway.api.sse_response import SSEResponse
from gateway.components import Components
from gateway.errors import ModelNotFound
from gateway.routing.service import Completed, Streaming
from gateway.types import Endpoint

router = APIRouter()
STARTED_AT = int(time.time())


async def _route(request: Request, endpoint: Endpoint) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    body = await read_body(request, parts.edge.max_body_bytes,
                           parts.edge.body_read_timeout_s, body_gate(request))
    route_request = parse_route_request(
        body,
        endpoint,
        request.state.request_id,
        request.headers.get("x-gateway-tags"),
        request.headers.get("x-session-id"),
    )
    if route_request.stream:
        streaming = await parts.routing.handle(tenant, route_request, request.headers)
        assert not isinstance(streaming, Completed)
        return SSEResponse(streaming.body, streaming.headers)
    try:
        result = await cancel_on_disconnect(
            request.receive, parts.routing.handle(tenant, route_request, request.headers)
        )
    except ClientGone:
        return Response(status_code=499)  # nobody is listening; the record says why
    assert isinstance(result, Completed)
    return WholeReply(result.body, result.content_type, result.headers)


class ClientGone(Exception):
    pass


async def cancel_on_disconnect(
    receive: Receive, work: Awaitable[Completed | Streaming]
) -> Completed | Streaming:
    """Run the dispatch; if the client hangs up first, cancel it (closing the upstream call)."""
    task = asyncio.current_task()
    assert task is not None
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        task.cancel()

    watcher = asyncio.create_task(watch())
    try:
        return await work
    except asyncio.CancelledError:
        if gone and task.uncancel() == 0:
            raise ClientGone from None
        raise
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


@router.post("/v1/chat/completions", openapi_extra=bodies.CHAT, response_model=None)
@router.post("/chat/completions", include_in_schema=False, response_model=None)
async def chat_completions(request: Request) -> Response:
    return await _route(request, Endpoint.CHAT)


@router.post("/v1/completions", openapi_extra=bodies.COMPLETIONS, response_model=None)
@router.post("/completions", include_in_schema=False, response_model=None)
async def completions(request: Request) -> Response:
    return await _route(request, Endpoint.COMPLETIONS)


@router.post("/v1/embeddings", openapi_extra=bodies.EMBEDDINGS, response_model=None)
@router.post("/embeddings", include_in_schema=False, response_model=None)
async def embeddings(request: Request) -> Response:
    return await _route(request, Endpoint.EMBEDDINGS)


# Served by the ASGI front door without FastAPI's per-request layers (see api/hot_path.py);
# the FastAPI routes above stay registered for the OpenAPI document.
HOT_ROUTES = {
    ("POST", path): handler
    for handler, paths in (
        (chat_completions, ("/v1/chat/completions", "/chat/completions")),
        (completions, ("/v1/completions", "/completions")),
        (embeddings, ("/v1/embeddings", "/embeddings")),
    )
    for path in paths
}


def _model_card(parts: Components, name: str) -> dict[str, object] | None:
    pool = parts.policy.current.pool(name)
    if pool is None:
        return None
    return {
        "id": name,
        "object": "model",
        "created": STARTED_AT,
        "owned_by": "gateway",
        # The longest context some candidate can take: routing picks one that fits.
        "max_model_len": max(b.context_window for b in pool.backends),
    }


@router.get("/v1/models")
@router.get("/models", include_in_schema=False)
async def list_models(request: Request) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    policy = parts.policy.current
    allowed = policy.tenant_models.get(tenant.tenant_name)
    cards = [
        _model_card(parts, name)
        for name in policy.public_models()
        if allowed is None or name in allowed
    ]
    return Response(orjson.dumps({"object": "list", "data": cards}),
                    media_type="application/json")


@router.get("/v1/models/{model:path}")
@router.get("/models/{model:path}", include_in_schema=False)
async def get_model(request: Request, model: str) -> Response:
    parts = components_of(request)
    tenant = await authenticate_tenant(request, parts.authenticator)
    allowed = parts.policy.current.tenant_models.get(tenant.tenant_name)
    card = _model_card(parts, model) if allowed is None or model in allowed else None
    if card is None:
        raise ModelNotFound(f"The model '{model}' does not exist", param="model")
    return Response(orjson.dumps(card), media_type="application/json")
