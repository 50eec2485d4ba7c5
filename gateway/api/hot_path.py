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
