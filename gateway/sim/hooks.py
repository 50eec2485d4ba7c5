"""Sim-only test hooks: the ASGI middleware that records requests and applies faults, and the
/sim/* endpoints that read and set them. Nothing here exists in a real vLLM.

  GET    /sim/requests   the last 100 requests (method, path, query, headers, decoded body)
  DELETE /sim/requests   forget them
  GET    /sim/faults     the faults in force
  POST   /sim/faults     {"status": 503, "count": N, "message": "..."}, {"delay_s": x},
                         {"abort_stream_after_tokens": k}, {"paths": [...]}; merged; no count
                         means until cleared
  DELETE /sim/faults     clear every fault
  GET    /sim/state      the engine's queues and KV cache right now
"""

from __future__ import annotations

import asyncio

import orjson
from fastapi import APIRouter, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.sim.errors import bad_request, error_response
from gateway.sim.protocol import decode_json
from gateway.sim.runtime import runtime_in_scope, runtime_of

# Polled constantly by scrapers and health checks; recording them would bury the requests
# a test wants to see.
_UNRECORDED_PATHS = {"/metrics", "/health"}

router = APIRouter()


class SimHooksMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path.startswith("/sim/") or path in _UNRECORDED_PATHS:
            await self.app(scope, receive, send)
            return
        runtime = runtime_in_scope(scope)
        body = await _read_body(receive)
        query = scope.get("query_string", b"").decode("latin-1")
        runtime.recorder.record(scope["method"], path, query, scope["headers"], body)
        action = runtime.faults.take(path)
        if action.delay_s:
            await asyncio.sleep(action.delay_s)
        if action.status is not None:
            await error_response(action.status, action.message)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the app the body already read, then listens for disconnects."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _json(payload: object, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status_code=status, media_type="application/json")


@router.get("/sim/requests")
async def list_requests(request: Request) -> Response:
    entries = runtime_of(request).recorder.entries()
    return _json({"object": "list", "data": [e.to_json() for e in entries]})


@router.delete("/sim/requests")
async def clear_requests(request: Request) -> Response:
    runtime_of(request).recorder.clear()
    return Response(status_code=204)


@router.get("/sim/faults")
async def get_faults(request: Request) -> Response:
    return _json(runtime_of(request).faults.describe())


@router.post("/sim/faults")
async def set_faults(request: Request) -> Response:
    faults = runtime_of(request).faults
    try:
        faults.configure(decode_json(await request.body()))
    except ValueError as exc:
        raise bad_request(str(exc)) from exc
    return _json(faults.describe())


@router.delete("/sim/faults")
async def clear_faults(request: Request) -> Response:
    runtime_of(request).faults.clear()
    return Response(status_code=204)


@router.get("/sim/state")
async def engine_state(request: Request) -> Response:
    scheduler = runtime_of(request).engine.scheduler
    return _json(
        {
            "running": len(scheduler.running),
            "waiting": len(scheduler.waiting),
            "kv_cache_usage": scheduler.pool.usage,
            "free_blocks": scheduler.pool.num_free,
            "cached_blocks": scheduler.pool.num_cached,
            "num_preemptions": scheduler.num_preemptions,
        }
    )
