"""The refusals the connection guard writes are OpenAI-shaped HTTP responses."""

from __future__ import annotations

import json

from gateway.cli.connection_guard import refusal


def test_a_refusal_is_a_complete_closing_response_with_an_openai_error() -> None:
    raw = refusal(431, "The request's headers exceed 65536 bytes.", "headers_too_large")
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 431 Request Header Fields Too Large"
    assert "connection: close" in lines and f"content-length: {len(body)}" in lines
    error = json.loads(body)["error"]
    assert error == {"message": "The request's headers exceed 65536 bytes.",
                     "type": "invalid_request_error", "param": None,
                     "code": "headers_too_large"}
