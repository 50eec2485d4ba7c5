"""Request bodies over GATEWAY_MAX_BODY_BYTES are refused with an OpenAI-shaped 413, declared
or chunked; and no CORS headers are sent by default, so no browser page may call the API."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import ADMIN_KEY, MAX_BODY, Gateway

CHAT = ["/v1/chat/completions", "/chat/completions", "/v1/completions", "/v1/embeddings",
        "/v1/messages", "/v1/messages/count_tokens"]
ORIGIN = "https://evil.example.net"


def oversized() -> bytes:
    filler = "a" * (MAX_BODY + 1024)
    return json.dumps({"model": "auto", "messages": [{"role": "user", "content": filler}]}).encode()


def chunks(body: bytes, size: int = 16 * 1024) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start:start + size]


def assert_too_large(resp: httpx.Response, path: str) -> None:
    """OpenAI-shaped, or Anthropic-shaped on the Anthropic front door (/v1/messages)."""
    assert resp.status_code == 413, (resp.status_code, resp.text[:300])
    body = resp.json()
    error = body["error"]
    if path.startswith("/v1/messages"):
        assert body["type"] == "error" and error["type"] == "request_too_large"
    else:
        assert error["type"] == "invalid_request_error"
    assert error["message"]


@pytest.mark.parametrize("path", CHAT)
def test_a_body_over_the_limit_is_a_413(gw: Gateway, path: str) -> None:
    resp = httpx.post(gw.url + path, content=oversized(), timeout=10, headers={
        "authorization": f"Bearer {gw.key}", "content-type": "application/json"})
    assert_too_large(resp, path)


@pytest.mark.parametrize("path", CHAT)
def test_a_chunked_body_over_the_limit_is_a_413(gw: Gateway, path: str) -> None:
    """No content-length to trust: the gateway counts what arrives and stops at the limit."""
    request = httpx.Request("POST", gw.url + path, content=chunks(oversized()), headers={
        "authorization": f"Bearer {gw.key}", "content-type": "application/json"})
    assert "content-length" not in request.headers
    assert request.headers["transfer-encoding"] == "chunked"
    with httpx.Client(timeout=10) as client:
        assert_too_large(client.send(request), path)


def test_a_body_just_under_the_limit_is_read(gw: Gateway) -> None:
    small = b'{"model": "auto", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]}'
    resp = httpx.post(gw.url + "/v1/chat/completions", content=small, timeout=10, headers={
        "authorization": f"Bearer {gw.key}", "content-type": "application/json"})
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/models", "/v1/usage",
                                  "/admin/tenants", "/healthz"])
def test_cors_is_off_by_default(gw: Gateway, path: str) -> None:
    preflight = httpx.options(gw.url + path, timeout=10, headers={
        "origin": ORIGIN, "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"})
    assert not [h for h in preflight.headers if h.lower().startswith("access-control-")]
    key = ADMIN_KEY if path.startswith("/admin") else gw.key
    if path == "/v1/chat/completions":
        resp = httpx.post(gw.url + path, timeout=10, json={
            "model": "auto", "max_tokens": 2, "messages": [{"role": "user", "content": "hi"}]},
            headers={"origin": ORIGIN, "authorization": f"Bearer {key}"})
    else:
        resp = httpx.get(gw.url + path, timeout=10,
                         headers={"origin": ORIGIN, "authorization": f"Bearer {key}"})
    assert resp.status_code == 200, resp.text[:300]
    assert not [h for h in resp.headers if h.lower().startswith("access-control-")]
