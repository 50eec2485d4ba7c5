"""The one place errors become HTTP responses, plus the x-request-id middleware.

Every error a client sees, including framework errors (unknown route, wrong method, a bug),
is OpenAI-shaped. A bug is logged with its traceback and the request id and shown as a
generic 500; a client that hung up mid-upload is one INFO line.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.api.parsing import new_request_id
from gateway.errors import GatewayError, InternalError, InvalidRequest

log = logging.getLogger("gateway.api")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def error_response(error: GatewayError) -> Response:
    return Response(
        content=error.to_json(),
        status_code=error.status,
        media_type="application/json",
        headers=error.headers(),
    )


def log_internal(error: GatewayError, method: str, path: str, request_id: str) -> None:
    """A 500 raised as InternalError (a bug met inside the request path) is logged with its
    cause: the client sees only the generic message."""
    if isinstance(error, InternalError):
        cause = error.__cause__ or error
        log.error("internal error on %s %s (request %s): %s", method, path, request_id,
                  error.message, exc_info=(type(cause), cause, cause.__traceback__))


def _request_id(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", "-"))


async def _on_gateway_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, GatewayError)
    log_internal(exc, request.method, request.url.path, _request_id(request))
    return error_response(exc)


async def _on_client_disconnect(request: Request, exc: Exception) -> Response:
    log.info("client disconnected before its request body arrived: %s %s (request %s)",
             request.method, request.url.path, _request_id(request))
    return Response(status_code=499)  # never sent: there is nobody to send it to


async def _on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kinds = {404: "not_found", 405: "method_not_allowed"}
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = allowed_methods(request)
    error = GatewayError(
        str(exc.detail), status=exc.status_code, error_type="invalid_request_error",
        code=kinds.get(exc.status_code), headers=headers,
    )
    return error_response(error)


def allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (Starlette names only the first route's,
    and GET and DELETE /v1/responses/{id} are two routes): asked of the router per method,
    which also sees into included routers."""
    routes = request.app.router.routes
    allowed = [
        method for method in METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL
               for route in routes)
    ]
    return ", ".join(allowed)


async def _on_validation_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
    param = ".".join(str(p) for p in first["loc"] if p != "body") or None
    return error_response(InvalidRequest(str(first["msg"]), param=param))


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    log.error("unhandled error on %s %s (request %s)", request.method, request.url.path,
              _request_id(request), exc_info=exc)
    return error_response(InternalError("the gateway hit an internal error"))


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(GatewayError, _on_gateway_error)
    app.add_exception_handler(HTTPException, _on_http_error)
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ClientDisconnect, _on_client_disconnect)
    app.add_exception_handler(Exception, _on_unexpected)


class RequestIdMiddleware:
    """Pure ASGI (no BaseHTTPMiddleware: it would buffer streams and cost ~100 µs a request).
    Gives every request an id in `scope["state"]` and every response an `x-request-id`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        header = (b"x-request-id", request_id.encode())

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        await self.app(scope, receive, send_with_id)
