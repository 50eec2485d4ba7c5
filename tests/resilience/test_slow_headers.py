"""Slow and oversized request headers against a real `gateway serve` process. uvicorn bounds
neither (a connection trickling its header block stays open as long as it trickles, and
httptools buffers a header of any size); the gateway's HTTP protocol does: 408 after
GATEWAY_HEADER_TIMEOUT_S, 431 past GATEWAY_MAX_HEADER_BYTES. Meanwhile everyone else is served
at normal speed with memory flat."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import openai
import pytest

from tests.resilience.processes import Process, gateway_before_one_sim

pytestmark = pytest.mark.resilience

SLOW_CONNECTIONS = 400
HOLD_S = 8.0  # how long the slow connections keep trickling while others are served
HEADER_TIMEOUT_S = 5.0
MAX_HEADER_BYTES = 32768


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, str]]:
    with gateway_before_one_sim(tmp_path_factory.mktemp("slow-headers"),
                                header_timeout_s=str(HEADER_TIMEOUT_S),
                                        max_header_bytes=str(MAX_HEADER_BYTES)) as running:
        yield running


def open_slow(port: int, n: int) -> socket.socket:
    """A connection that has sent a request line and one header, and no end of headers."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nx-n: {n}".encode())
    return sock


def answer(sock: socket.socket, timeout_s: float) -> bytes:
    """Everything the gateway sends on this connection until it closes it."""
    sock.settimeout(timeout_s)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return out


def chat(client: openai.OpenAI) -> float:
    started = time.monotonic()
    reply = client.chat.completions.create(
        model="auto", max_tokens=4, messages=[{"role": "user", "content": "hello there"}])
    assert reply.choices[0].message.content
    return time.monotonic() - started


def test_slow_header_connections_are_cut_off_without_starving_others(
    gateway: tuple[Process, str],
) -> None:
    gw, key = gateway
    # Closed on the way out: a client left to the garbage collector leaks its pooled socket,
    # and the ResourceWarning then fails whichever later test happens to collect it.
    with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0,
                       timeout=10) as client:
        _slow_header_connections_are_cut_off(gw, client)


def _slow_header_connections_are_cut_off(gw: Process, client: openai.OpenAI) -> None:
    for _ in range(3):
        chat(client)  # warm every code path up once
    before_s = sorted(chat(client) for _ in range(10))[5]
    baseline_kib = gw.rss_kib()

    opened = time.monotonic()
    slow = [open_slow(gw.port, n) for n in range(SLOW_CONNECTIONS)]
    stop = threading.Event()

    def trickle() -> None:  # one more header byte on every slow connection every 0.5 s
        while not stop.wait(0.5):
            for sock in slow:
                try:
                    sock.send(b"x")
                except OSError:
                    pass  # cut off by the gateway: what this test waits for

    dripping = threading.Thread(target=trickle)
    dripping.start()
    latencies: list[float] = []
    try:
        deadline = time.monotonic() + HOLD_S
        while time.monotonic() < deadline:
            latencies.append(chat(client))
        peak_kib = gw.rss_kib()
        answers = [answer(sock, timeout_s=2.0) for sock in slow]
    finally:
        stop.set()
        dripping.join()
        for sock in slow:
            sock.close()

    during_s = sorted(latencies)[len(latencies) // 2]
    grown_mib = (peak_kib - baseline_kib) / 1024
    timed_out = sum(a.startswith(b"HTTP/1.1 408") and b"header_timeout" in a for a in answers)
    print(f"{SLOW_CONNECTIONS} slow-header connections, cut off after {HEADER_TIMEOUT_S:g} s "
          f"({timed_out} answered 408 within {time.monotonic() - opened:.1f} s): "
          f"{len(latencies)} requests served, median {before_s * 1000:.0f} → "
          f"{during_s * 1000:.0f} ms, RSS +{grown_mib:.1f} MiB")
    assert timed_out == SLOW_CONNECTIONS
    assert len(latencies) >= 10
    assert during_s < max(4 * before_s, 0.5)
    assert grown_mib < 64  # a partial header block costs a connection, not megabytes
    chat(client)  # and once they are gone, nothing is left over


def test_an_oversized_header_block_is_refused_with_431(gateway: tuple[Process, str]) -> None:
    gw, key = gateway
    baseline_kib = gw.rss_kib()
    sock = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ")
    sent = 0
    try:
        while sent < 64 * 1024 * 1024:  # a 64 MiB header value, unless cut off first
            sock.sendall(b"a" * 65536)
            sent += 65536
    except OSError:
        pass
    with sock:
        reply = answer(sock, timeout_s=5.0)
    assert reply.startswith(b"HTTP/1.1 431") and b"headers_too_large" in reply, reply[:200]
    assert sent < 8 * 1024 * 1024, sent  # refused early, not after reading it all
    assert (gw.rss_kib() - baseline_kib) / 1024 < 16
    # A header block under the limit is served as usual.
    with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0, timeout=10,
                       default_headers={"x-note": "n" * (MAX_HEADER_BYTES // 2)}) as client:
        chat(client)
