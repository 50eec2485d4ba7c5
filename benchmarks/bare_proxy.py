"""The thinnest Python pass-through proxy we could write: the reference the overhead benchmark
measures the gateway against, in the same run.

An aiohttp server and one aiohttp ClientSession (keep-alive pool to the upstream, no limit on
connections): each POST's body goes upstream unchanged, a whole reply comes back as one body
and a stream is relayed chunk by chunk as the upstream sends it. No parsing, no auth, no
logging; uvloop, as the gateway runs. It authenticates nothing and routes nowhere: it is the
floor under any Python proxy, not a product.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import aiohttp
import uvloop
from aiohttp import web

# Hop-by-hop and framing headers the proxy must not copy from the upstream's reply.
_DROPPED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})
_SESSION = web.AppKey("session", aiohttp.ClientSession)


async def _relay(request: web.Request) -> web.StreamResponse:
    session = request.app[_SESSION]
    body = await request.read()
    headers = {"content-type": request.headers.get("content-type", "application/json")}
    auth = request.headers.get("authorization")
    if auth is not None:
        headers["authorization"] = auth
    async with session.post(request.app["upstream"] + request.path, data=body,
                            headers=headers) as upstream:
        reply_headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _DROPPED}
        if not upstream.headers.get("content-type", "").startswith("text/event-stream"):
            return web.Response(body=await upstream.read(), status=upstream.status,
                                headers=reply_headers)
        response = web.StreamResponse(status=upstream.status, headers=reply_headers)
        await response.prepare(request)
        async for chunk in upstream.content.iter_any():
            await response.write(chunk)
        await response.write_eof()
        return response


async def _health(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def build(upstream: str) -> web.Application:
    app = web.Application()
    app["upstream"] = upstream.rstrip("/")

    async def session(app: web.Application) -> AsyncIterator[None]:
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=None)
        async with aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=60), auto_decompress=False,
        ) as client:
            app[_SESSION] = client
            yield

    app.cleanup_ctx.append(session)
    app.router.add_get("/health", _health)
    app.router.add_post("/{path:.*}", _relay)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8000")
    args = parser.parse_args()
    web.run_app(build(args.upstream), host="127.0.0.1", port=args.port, access_log=None,
                print=None, loop=uvloop.new_event_loop())


if __name__ == "__main__":
    main()
