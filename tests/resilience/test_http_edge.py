"""The HTTP edge of a real `gateway serve`: the header limit holds however the bytes of the
block arrive (one write, or several whose last completes it), and an HTTP/1.0 client, which
knows no chunked encoding, gets a streamed answer whole with its Content-Length."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from tests.resilience.processes import Process, gateway_before_one_sim
from tests.resilience.test_slow_headers import answer

pytestmark = pytest.mark.resilience

MAX_HEADER_BYTES = 16384


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, str]]:
    with gateway_before_one_sim(tmp_path_factory.mktemp("edge"),
                                max_header_bytes=str(MAX_HEADER_BYTES)) as running:
        yield running


@pytest.mark.parametrize("pieces", [1, 3])
def test_a_header_block_over_the_limit_is_refused_however_it_arrives(
    gateway: tuple[Process, str], pieces: int,
) -> None:
    gw, key = gateway
    block = (f"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {key}\r\n"
             f"x-big: {'a' * (MAX_HEADER_BYTES + 512)}\r\n\r\n").encode()
    step = -(-len(block) // pieces)
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as sock:
        for at in range(0, len(block), step):
            sock.sendall(block[at:at + step])
            time.sleep(0.05)  # each piece read on its own
        reply = answer(sock, timeout_s=5.0)
    assert reply.startswith(b"HTTP/1.1 431") and b"headers_too_large" in reply, reply[:300]


def test_an_http10_client_gets_a_stream_whole_with_its_length(
    gateway: tuple[Process, str],
) -> None:
    gw, key = gateway
    body = json.dumps({"model": "auto", "stream": True, "max_tokens": 8,
                       "messages": [{"role": "user", "content": "hello"}]}).encode()
    request = (f"POST /v1/chat/completions HTTP/1.0\r\nhost: 127.0.0.1\r\n"
               f"authorization: Bearer {key}\r\ncontent-type: application/json\r\n"
               f"content-length: {len(body)}\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as sock:
        sock.sendall(request)
        reply = answer(sock, timeout_s=10.0)  # read until the gateway closes
    head, _, payload = reply.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    assert lines[0].split()[1] == b"200", head
    assert not any(line.startswith(b"transfer-encoding") for line in lines), head
    length = next(int(line.split(b":")[1]) for line in lines
                  if line.startswith(b"content-length:"))
    assert length == len(payload) and payload.rstrip().endswith(b"data: [DONE]"), payload[-200:]
