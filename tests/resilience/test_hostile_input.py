"""Whatever a client sends, a real `gateway serve` process answers it with an OpenAI-shaped 4xx,
never a 5xx: JSON nested past what can be written back out, numbers past 64 bits, broken
encodings, bytes uvicorn's HTTP parser rejects, odd header bytes. A client that hangs up
mid-upload, and each protocol refusal, is one log line with its request id, no traceback."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.resilience.processes import Process, gateway_before_one_sim

pytestmark = pytest.mark.resilience

HELLO = [{"role": "user", "content": "hello"}]
DEPTHS = (200, 253, 254, 255, 300, 1023, 1024, 1025, 5000)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Process, str]]:
    with gateway_before_one_sim(tmp_path_factory.mktemp("hostile"), log_level="info") as running:
        yield running


def nested(depth: int) -> str:
    """`depth` levels of arrays and objects around one string."""
    return '{"a":' * (depth // 2) + '["x"]' * 0 + "[" * (depth - depth // 2) + '"x"' + (
        "]" * (depth - depth // 2)) + "}" * (depth // 2)


def post(gw: Process, key: str, path: str, body: bytes,
         headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(gw.url + path, content=body, timeout=30, headers={
        "authorization": f"Bearer {key}", "x-api-key": key,
        "content-type": "application/json", **(headers or {})})


def assert_openai_4xx(reply: httpx.Response, what: str) -> dict[str, object]:
    assert 400 <= reply.status_code < 500, f"{what}: {reply.status_code} {reply.text[:300]}"
    error = reply.json()["error"]
    assert set(error) >= {"message", "type"}, what
    return error  # type: ignore[no-any-return]


def chat_body(field: str, raw_value: str) -> bytes:
    body = {"model": "auto", "max_tokens": 4, "messages": HELLO}
    text = json.dumps(body)[:-1] + f', "{field}": {raw_value}}}'
    return text.encode()


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_nesting_in_any_passed_through_field_is_a_400_naming_it(
    gateway: tuple[Process, str], depth: int
) -> None:
    gw, key = gateway
    for field in ("metadata", "response_format", "tools", "logit_bias", "x_custom"):
        reply = post(gw, key, "/v1/chat/completions", chat_body(field, nested(depth)))
        if reply.status_code == 200:
            assert depth < 254, f"{field} at depth {depth} was accepted"
            continue
        error = assert_openai_4xx(reply, f"{field} nested {depth} deep")
        if depth < 1024:  # past 1,024 the parser itself refuses the whole body
            assert error["param"] in (field, None), error
        if depth >= 254 and depth < 1024 and field in ("metadata", "x_custom"):
            assert error["param"] == field and error["code"] == "too_deeply_nested", error


@pytest.mark.parametrize("depth", (253, 254, 1000, 1023))
def test_deep_nesting_through_the_anthropic_front_door_is_a_400(
    gateway: tuple[Process, str], depth: int
) -> None:
    gw, key = gateway
    tool = ('{"name": "t", "input_schema": ' + nested(depth) + "}")
    for field, value in (("metadata", nested(depth)), ("tools", f"[{tool}]")):
        body = json.dumps({"model": "auto", "max_tokens": 4, "messages": HELLO})[:-1]
        reply = post(gw, key, "/v1/messages", f'{body}, "{field}": {value}}}'.encode())
        assert reply.status_code < 500, f"{field} {depth}: {reply.status_code} {reply.text[:300]}"


def test_deep_tool_call_arguments_are_not_a_500(gateway: tuple[Process, str]) -> None:
    gw, key = gateway
    arguments = "[" * 1020 + "]" * 1020
    messages = [*HELLO, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"}]
    reply = post(gw, key, "/v1/chat/completions", json.dumps(
        {"model": "auto", "max_tokens": 4, "messages": messages}).encode())
    assert reply.status_code < 500, reply.text[:300]


@pytest.mark.parametrize("raw", [
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1e400}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], '
    b'"max_tokens": 18446744073709551615}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], '
    b'"max_tokens": 9223372036854775807}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], "temperature": -1e308}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "\\ud800"}]}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "\xff\xfe"}]}',
    b'{"model": "\\u0000", "messages": [{"role": "user", "content": "hi"}]}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], "n": -1}',
    b'{"model": "auto", "messages": [{"role": "user", "content": ["hi", 1, null]}]}',
    b'{"model": "auto", "messages": [{"role": 7, "content": {"a": 1}}]}',
    b'{"model": "auto", "messages": [{"role": "user", "content": "hi"}], "stream": "yes"}',
    b"\xef\xbb\xbf{}",
    b"[]" * 100_000,
])
def test_odd_numbers_and_encodings_are_refused_as_4xx(
    gateway: tuple[Process, str], raw: bytes
) -> None:
    gw, key = gateway
    reply = post(gw, key, "/v1/chat/completions", raw)
    assert reply.status_code < 500, f"{raw[:80]!r}: {reply.status_code} {reply.text[:300]}"
    if reply.status_code != 200:
        assert_openai_4xx(reply, repr(raw[:80]))


@pytest.mark.parametrize("name,value", [
    ("x-gateway-tags", "caf\xe9,\xff\xfe,,," + "t" * 5000),
    ("x-session-id", "\xe9" * 10000),
    ("authorization", "Bearer \xff\xfe\xfd"),
    ("x-request-id", "\x7f" * 50),
    ("content-type", "application/json; charset=latin-1"),
])
def test_odd_header_bytes_are_not_a_500(
    gateway: tuple[Process, str], name: str, value: str
) -> None:
    gw, key = gateway
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json",
               name: value}
    raw = [(k.encode(), v.encode("latin-1")) for k, v in headers.items()]
    body = json.dumps({"model": "auto", "max_tokens": 4, "messages": HELLO}).encode()
    reply = httpx.post(gw.url + "/v1/chat/completions", content=body, headers=raw, timeout=30)
    assert reply.status_code < 500, f"{name}: {reply.status_code} {reply.text[:300]}"


def exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.settimeout(10)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


MALFORMED = [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n",
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n",
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
    b"zz\r\nhello\r\n0\r\n\r\n",
    b"GET /v1/models\xff\xfe HTTP/1.1\r\nhost: x\r\n\r\n",
    b"GET /health HTTP/1.1\r\nhost: x\r\nx-a: \x00\x01\r\n\r\n",
    b"GET /health HTTP/9.9\r\nhost: x\r\n\r\n",
    b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 7\r\n\r\n",
]


@pytest.mark.parametrize("raw", MALFORMED)
def test_what_the_http_parser_rejects_is_an_openai_shaped_400(
    gateway: tuple[Process, str], raw: bytes
) -> None:
    gw, _ = gateway
    out = exchange(gw.port, raw)
    head, _, body = out.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0]
    assert status.startswith(b"HTTP/1.1 4"), f"{raw!r}: {out[:300]!r}"
    lines = head.decode("latin-1").lower().split("\r\n")
    assert "content-type: application/json" in lines, out[:300]
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    request_id = next(line.split(": ", 1)[1] for line in lines if line.startswith("x-request-id"))
    if status.startswith(b"HTTP/1.1 400"):
        wait_for_log(gw, request_id)
        assert gw.output().count(request_id) == 1


def wait_for_log(gw: Process, needle: str) -> None:
    deadline = time.monotonic() + 10
    while needle not in gw.output():
        assert time.monotonic() < deadline, f"{needle} not logged:\n{gw.output()}"
        time.sleep(0.1)


def test_a_client_gone_mid_upload_is_one_line_without_traceback(
    gateway: tuple[Process, str]
) -> None:
    gw, key = gateway
    before = gw.log_path.read_text(errors="replace")
    for path in ("/v1/chat/completions", "/v1/messages"):
        with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n"
                         f"x-api-key: {key}\r\ncontent-type: application/json\r\n"
                         "content-length: 100000\r\n\r\n{\"model\": \"auto\"".encode())
            time.sleep(0.3)
    deadline = time.monotonic() + 10
    while gw.log_path.read_text(errors="replace")[len(before):].count("disconnected") < 2:
        assert time.monotonic() < deadline, gw.output()
        time.sleep(0.1)
    time.sleep(0.5)
    new = gw.log_path.read_text(errors="replace")[len(before):]
    assert "Traceback" not in new and "ClientDisconnect" not in new, new
    lines = [line for line in new.splitlines() if "disconnected" in line]
    assert len(lines) == 2 and all("req_" in line for line in lines), new
