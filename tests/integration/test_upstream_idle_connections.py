"""Idle upstream connections are dropped before the server drops them: uvicorn (and so vLLM's
OpenAI server) closes a connection idle for 5 s, and a request sent on it as it closes fails
with "Server disconnected" before the server read it. Against a real uvicorn on 127.0.0.1 with
that default keep-alive."""

from __future__ import annotations

import asyncio

import orjson
from starlette.types import Receive, Scope, Send

from gateway.providers.http_pool import IDLE_CONNECTION_S, SessionPool
from gateway.types import Backend
from tests.support.servers import serve

UVICORN_KEEP_ALIVE_S = 5.0  # uvicorn's default, and VLLM_HTTP_TIMEOUT_KEEP_ALIVE's


async def client_port(scope: Scope, receive: Receive, send: Send) -> None:
    """Answers with the port the request came from: one port, one connection."""
    if scope["type"] != "http":
        return
    body = orjson.dumps({"port": scope["client"][1]})
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


async def test_a_connection_idle_near_the_servers_keep_alive_is_not_reused() -> None:
    assert IDLE_CONNECTION_S < UVICORN_KEEP_ALIVE_S - 0.5
    with serve(client_port) as server:  # type: ignore[arg-type]
        backend = Backend(name="engine", provider="vllm", base_url=f"{server.url}/v1",
                          model="m", zone="self_hosted", context_window=4096, quality_tier=1)
        pool = SessionPool()
        try:
            session = pool.session(backend)

            async def port() -> int:
                async with session.post(f"{server.url}/v1/chat/completions", data=b"{}") as r:
                    assert r.status == 200
                    return int(orjson.loads(await r.read())["port"])

            first = await port()
            assert await port() == first  # busy connections are kept and reused
            # Past our idle limit, still inside the server's: the next request must not
            # bet on a connection the server is about to close.
            await asyncio.sleep(IDLE_CONNECTION_S + 0.3)
            assert await port() != first
        finally:
            await pool.aclose()
