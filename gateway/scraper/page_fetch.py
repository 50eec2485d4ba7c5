"""One bounded GET of a metrics page: a Prometheus text page is read whole, so an endpoint that
answers with megabytes (or never stops) must not take the gateway's memory with it."""

from __future__ import annotations

import httpx


class PageError(Exception):
    """The page could not be read: a non-200 answer or a body over the size bound."""


async def fetch_page(client: httpx.AsyncClient, url: str, *, timeout_s: float,
                     max_bytes: int) -> str:
    async with client.stream("GET", url, timeout=timeout_s) as response:
        if response.status_code != 200:
            raise PageError(f"HTTP {response.status_code}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise PageError(f"response larger than {max_bytes} bytes")
    return body.decode("utf-8", errors="replace")
