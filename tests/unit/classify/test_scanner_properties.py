"""Property tests for the sensitivity scan over text a client controls: tokens that look like
JWTs but decode to anything, and tool-call arguments of any shape and depth, are scanned and
redacted without an exception, and a found secret never survives redaction."""

from __future__ import annotations

import base64
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify.payload_text import redact_chat_payload
from gateway.classify.sensitivity import SensitivityScanner

SCANNER = SensitivityScanner()
SECRET = "Xk9\\\\mQ2vL7pR4tZ8abc"  # as it appears inside a JSON string: with an escape


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


nested = st.integers(0, 3000).map(lambda depth: b"[" * depth + b"]" * depth)
decoded_parts = st.one_of(
    st.binary(max_size=40),
    st.just(b'{"alg":"HS256","typ":"JWT"}'),
    nested.map(lambda inner: b'{"alg":' + inner + b"}"),
    nested.map(lambda inner: b'{"a":' + inner),
)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=30), decoded_parts, decoded_parts, st.text(max_size=30))
def test_any_jwt_lookalike_is_scanned_without_an_exception(
    before: str, header: bytes, payload: bytes, after: str
) -> None:
    text = f"{before} eyJ{b64(header)[3:]}.eyJ{b64(payload)[3:]} {after}"
    for span in SCANNER.scan(text):
        assert 0 <= span.start < span.end <= len(text)


@st.composite
def arguments(draw: st.DrawFn) -> str:
    # Deeper than a JSON parser recurses, or not JSON at all: the spans found in the whole
    # text are then replaced in place.
    depth = draw(st.integers(1000, 3000))
    tail = draw(st.sampled_from(["[" * depth + "]" * depth, "[" * depth,
                                 json.dumps(draw(st.integers())) + ","]))
    return '{"password": "' + SECRET + '", "n": ' + tail + "}"


@settings(max_examples=60, deadline=None)
@given(arguments())
def test_tool_arguments_of_any_depth_are_redacted(args: str) -> None:
    payload = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": args}}]}]}
    redacted, mapping = redact_chat_payload(payload, SCANNER)
    out = redacted["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert len(mapping) >= 1 and "mQ2vL7pR4tZ8" not in out
