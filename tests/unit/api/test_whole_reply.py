"""WholeReply, the hot path's answer, sends exactly what Starlette's Response would."""

from __future__ import annotations

import asyncio

import pytest
from starlette.responses import Response
from starlette.types import Message

from gateway.api.hot_path import WholeReply

HEADERS = {
    "x-ratelimit-limit-requests": "600",
    "x-gateway-backend": "onprem-8b",
    "X-Gateway-Rule": "cheapest",
    "x-gateway-cost-usd": "0.000012",
}


async def _sent(response: Response) -> list[Message]:
    messages: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("a whole reply reads nothing")

    async def send(message: Message) -> None:
        messages.append(message)

    await response({"type": "http"}, receive, send)
    return messages


@pytest.mark.parametrize("content_type", [
    "application/json", "application/json; charset=utf-8", "text/plain",
    "text/plain; charset=latin-1",
])
@pytest.mark.parametrize("headers", [
    HEADERS, {}, {**HEADERS, "Content-Type": "application/x-other"},
    {**HEADERS, "content-length": "3"},
])
def test_whole_reply_sends_what_starlette_would(content_type: str, headers: dict[str, str]) -> None:
    body = b'{"id":"chatcmpl-1","choices":[]}'
    expected = asyncio.run(_sent(Response(body, media_type=content_type, headers=headers)))
    got = asyncio.run(_sent(WholeReply(body, content_type, headers)))
    assert got == expected
    assert WholeReply(body, content_type, headers).raw_headers == \
        Response(body, media_type=content_type, headers=headers).raw_headers
