"""The ASGI front door: inference routes straight to their handlers, everything else to FastAPI.

Profiled under load, FastAPI's per-request layering (six middleware coroutines, two
AsyncExitStacks, dependency solving, exception wrappers) cost more CPU than the gateway's own
work. The three inference endpoints carry nearly all traffic, so they skip it: one dict
lookup picks the handler, which gets the same request id, error rendering and last-resort
500 as every other route. Admin, health, models and the OpenAPI docs stay on FastAPI.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from gateway.api.body_gate import releasing_holds
from gateway.api.errors import error_response, log_internal
from gateway.api.parsing import new_request_id
from gateway.errors import GatewayError, InternalError

log = logging.getLogger("gateway.api")

Handler = Callable[[Request], Awaitable[Response]]


class WholeReply(Response):
    """A whole 200 answer from the routing service: the same status, headers and bytes as
    `Response(body, media_type=content_type, headers=headers)`, built without Starlette's
    general header handling (its header-key scan and three list passes were a measurable
    part of every answer's CPU). Sent by Starlette's own `__call__`, so FastAPI can still
    return it."""

    def __init__(self, body: bytes, content_type: str, headers: dict[str, str]) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        # As Starlette's init_headers: a length and a type unless the caller gave them.
        given = {k for k, _ in raw}
        if b"content-length" not in given:
            raw.append((b"content-length", str(len(body)).encode("latin-1")))
        if b"content-type" not in given:
            if content_type.startswith("text/") and "charset=" not in content_type.lower():
                content_type += "; charset=utf-8"
            raw.append((b"content-type", content_type.encode("latin-1")))
        self.media_type = content_type
        self.raw_headers = raw


class HotPathApp:
    def __init__(self, app: FastAPI, routes: dict[tuple[str, str], Handler]) -> None:
        self.app = app
        self.state = app.state
        self._routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            handler = self._routes.get((scope["method"], scope["path"]))
            if handler is not None:
                await self._handle(handler, scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _handle(self, handler: Handler, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = new_request_id()
        scope["state"] = {"request_id": request_id}
        scope["app"] = self.app  # what request.app resolves to, as under FastAPI
        request = Request(scope, receive, send)
        with releasing_holds():  # the request's body bytes count until its response is over
            try:
                response = await handler(request)
            except GatewayError as exc:
                log_internal(exc, scope["method"], scope["path"], request_id)
                response = error_response(exc)
            except ClientDisconnect:
                # Nobody to answer: uvicorn sends nothing for a gone client. One line, no
                # traceback: any client can hang up, and must not be able to fill the log.
                log.info("client disconnected before its request body arrived: %s %s "
                         "(request %s)", scope["method"], scope["path"], request_id)
                return
            except Exception:
                log.exception("unhandled error on %s %s (request %s)", scope["method"],
                              scope["path"], request_id)
                response = error_response(InternalError("the gateway hit an internal error"))
            response.raw_headers.append((b"x-request-id", request_id.encode()))
            await response(scope, receive, send)
