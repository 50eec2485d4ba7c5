"""Kept-alive upstream connections: idle ones are dropped before the server drops them
(uvicorn, and so vLLM's OpenAI server, closes a connection idle for 5 s, and a request sent on
it as it closes fails with "Server disconnected" before the server read it), and a request the
server closed its connection on unanswered is sent once more rather than failed over. Against
a real uvicorn, and a raw HTTP server that closes connections on cue, on 127.0.0.1; and the
timeouts each upstream gets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, cast

import aiohttp
import orjson
import pytest
from starlette.types import Receive, Scope, Send

from gateway.errors import GatewayError, UpstreamFailed
from gateway.providers.http_pool import IDLE_CONNECTION_S, SessionPool, post_stream, post_whole
from gateway.types import Backend
from gateway.upstream import DispatchError
from tests.support.servers import free_port, serve

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


class ClosesOneKeptConnection:
    """A raw HTTP/1.1 server whose first connection answers one request and is then closed as
    the next request reaches it, unread: the moment a server's idle timeout meets a reused
    connection. Every later connection answers whatever it is sent. `always`: every
    connection is closed that way, as a server that dies on each request would."""

    def __init__(self, *, always: bool = False) -> None:
        self.always = always
        self.connections = 0
        self.answered = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        drop_second = self.connections == 1 or self.always
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                if drop_second and (served == 1 or self.always):
                    return  # closed unanswered
                served += 1
                self.answered += 1
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


def engine_at(port: int) -> Backend:
    return Backend(name="engine", provider="vllm", base_url=f"http://127.0.0.1:{port}/v1",
                   model="m", zone="self_hosted", context_window=4096, quality_tier=1)


def refuse(status: int, body: bytes) -> tuple[GatewayError, bool]:
    return UpstreamFailed(f"status {status}"), True


@asynccontextmanager
async def pooled(upstream: ClosesOneKeptConnection) -> AsyncIterator[tuple[Backend, SessionPool]]:
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", 0)
    pool = SessionPool()
    try:
        yield engine_at(server.sockets[0].getsockname()[1]), pool
    finally:
        await pool.aclose()
        server.close()
        await server.wait_closed()


async def test_a_request_the_server_closed_its_kept_connection_on_is_sent_once_more() -> None:
    """Failing over would send it all the same, to a backend the router ranked lower."""
    upstream = ClosesOneKeptConnection()
    async with pooled(upstream) as (backend, pool):
        session, url = pool.session(backend), f"{backend.base_url}/chat/completions"
        for _ in range(2):
            body, _ = await post_whole(session, backend, url, b"{}", {}, refuse)
            assert body == b"{}"
        assert (upstream.connections, upstream.answered) == (2, 2)
        stream = await post_stream(session, backend, url, b"{}", {}, refuse)  # reused again
        assert await stream.read() == b"{}"
        stream.release()


async def test_a_server_that_closes_every_request_unanswered_is_a_failure_after_one_resend(
) -> None:
    upstream = ClosesOneKeptConnection(always=True)
    async with pooled(upstream) as (backend, pool):
        with pytest.raises(DispatchError) as failed:
            await post_whole(pool.session(backend), backend, f"{backend.base_url}/x", b"{}", {},
                             refuse)
        assert failed.value.retryable and "unreachable" in failed.value.error.message
        assert upstream.connections == 2 and upstream.answered == 0


class CountingSession:
    """A real session whose POSTs are counted."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session, self.posts = session, 0

    def post(self, url: str, **kwargs: Any) -> Any:
        self.posts += 1
        return self.session.post(url, **kwargs)


async def test_a_refused_connection_is_not_sent_again_the_failover_takes_it() -> None:
    """Nothing listens: the request never left, and another backend may take it at once."""
    backend, pool = engine_at(free_port()), SessionPool()
    try:
        counting = CountingSession(pool.session(backend))
        session = cast(aiohttp.ClientSession, counting)
        with pytest.raises(DispatchError) as failed:
            await post_whole(session, backend, f"{backend.base_url}/x", b"{}", {}, refuse)
        assert failed.value.retryable and counting.posts == 1
    finally:
        await pool.aclose()


async def test_upstream_limits_are_the_gateways_settings_unless_the_policy_sets_its_own(
) -> None:
    pool = SessionPool(connect_timeout_s=30.0, read_timeout_s=120.0, max_connections=2048)
    try:
        default = pool.session(engine_at(1))
        assert (default.timeout.connect, default.timeout.sock_read) == (30.0, 120.0)
        assert default.connector is not None and default.connector.limit == 2048
        own = pool.session(replace(engine_at(2), read_timeout_s=600.0, max_connections=64))
        assert (own.timeout.connect, own.timeout.sock_read) == (30.0, 600.0)
        assert own.connector is not None and own.connector.limit == 64
    finally:
        await pool.aclose()
