"""A local Anthropic Messages API (`POST /v1/messages`) for tests, strict the way the real one is.

Speaks the wire format of ../shared/reference/wire-formats.md §2: `x-api-key` (or bearer) and
`anthropic-version` required; unknown fields, a missing max_tokens, temperature above 1,
whitespace-only stop sequences, roles other than user/assistant and unpaired tool_use /
tool_result blocks rejected with Anthropic's error shape; replies and named stream events in
Anthropic's order; 429/413/529 (with `retry-after` on 429 and 529) and mid-stream `error`
events on request (faults). With `thinking` on, a signed thinking block comes first, and an
assistant turn with tool use must hand it back (signature intact), as the real API demands.
Answers are deterministic (see mock_anthropic_answers.py).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.mock_anthropic_answers import Answer, plan_answer, validate_body

ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401,
                "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                "rate_limit_error": 429, "api_error": 500, "overloaded_error": 529}


@dataclass
class Fault:
    """One queued misbehaviour: an error status before anything, or trouble mid-stream."""

    error_type: str | None = None  # an HTTP error with this Anthropic type
    message: str = "injected"
    stream_error_after: int | None = None  # send an `error` event after this many events
    drop_after: int | None = None  # end the stream (no message_stop) after this many events


@dataclass
class Recorded:
    headers: dict[str, str]
    body: Any


@dataclass
class MockAnthropic:
    api_key: str
    requests: list[Recorded] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # As the real API: the first request with a cache_control'd system prompt writes the
    # cache (cache_creation_input_tokens), later ones read it. Off: every one reads.
    writes_cache_first: bool = False
    cached_systems: set[bytes] = field(default_factory=set)

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/v1/messages", self._messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", self._count_tokens, methods=["POST"]),
        ])

    def last(self) -> Recorded:
        return self.requests[-1]

    async def _receive(self, request: Request) -> tuple[str, Any, Response | None]:
        """(request id, parsed body, refusal for a bad key or missing version), recorded."""
        request_id = f"req_mock{next(self.ids)}"
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            body = None
        self.requests.append(Recorded(headers, body))
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        if self.api_key not in (headers.get("x-api-key"), bearer):
            return request_id, body, _error("authentication_error", "invalid x-api-key",
                                            request_id)
        if "anthropic-version" not in headers:
            return request_id, body, _error(
                "invalid_request_error", "anthropic-version: header is required", request_id)
        return request_id, body, None

    async def _messages(self, request: Request) -> Response:
        request_id, body, refused = await self._receive(request)
        if refused is not None:
            return refused
        problem = validate_body(body)
        if problem is not None:
            return _error(problem[0], problem[1], request_id)
        fault = self.faults.pop(0) if self.faults else Fault()
        if fault.error_type is not None:
            return _error(fault.error_type, fault.message, request_id)
        answer = plan_answer(body, f"msg_mock{next(self.ids)}")
        system = orjson.dumps(body.get("system"))
        if self.writes_cache_first and answer.cache_read and system not in self.cached_systems:
            self.cached_systems.add(system)
            answer.cache_write, answer.cache_read = answer.cache_read, 0
        if body.get("stream"):
            return StreamingResponse(
                _events(answer, fault), media_type="text/event-stream",
                headers={"request-id": request_id, "cache-control": "no-cache"},
            )
        return Response(orjson.dumps(answer.message()), media_type="application/json",
                        headers={"request-id": request_id})


    async def _count_tokens(self, request: Request) -> Response:
        """`{"input_tokens": n}`; this mock's tokenizer is one token per whitespace-separated
        word of the system prompt and text blocks. Fields a Messages request has but
        count_tokens does not (max_tokens, stream, …) are refused, as the real API does."""
        request_id, body, refused = await self._receive(request)
        if refused is not None:
            return refused
        if not isinstance(body, dict) or "model" not in body or "messages" not in body:
            return _error("invalid_request_error", "model and messages: Field required",
                          request_id)
        for key in body:
            if key not in COUNT_FIELDS:
                return _error("invalid_request_error", f"{key}: Extra inputs are not permitted",
                              request_id)
        return Response(orjson.dumps({"input_tokens": _words(body)}),
                        media_type="application/json", headers={"request-id": request_id})


COUNT_FIELDS = frozenset(("model", "messages", "system", "tools", "tool_choice", "thinking",
                          "mcp_servers"))


def _words(body: dict[str, Any]) -> int:
    system = body.get("system") or ""
    texts = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return sum(len(t.split()) for t in texts)


def _error(error_type: str, message: str, request_id: str) -> Response:
    body = {"type": "error", "error": {"type": error_type, "message": message},
            "request_id": request_id}
    headers = {"request-id": request_id}
    if error_type in ("rate_limit_error", "overloaded_error"):
        headers["retry-after"] = "3"  # Anthropic says when to come back on 429 (and 529)
    return Response(orjson.dumps(body), status_code=ERROR_STATUS[error_type],
                    media_type="application/json", headers=headers)


def sse(kind: str, data: dict[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + b"\n\n"


def stream_events(answer: Answer) -> list[bytes]:
    """The whole stream, in Anthropic's order: message_start, ping, blocks, message_delta,
    message_stop."""
    start = {**answer.message(), "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**answer.usage(), "output_tokens": 1}}
    events = [sse("message_start", {"message": start}), sse("ping", {})]
    for index, block in enumerate(answer.blocks):
        if block["type"] == "text":
            events.append(sse("content_block_start", {
                "index": index, "content_block": {"type": "text", "text": ""}}))
            for piece in answer.text_pieces(block["text"]):
                events.append(sse("content_block_delta", {
                    "index": index, "delta": {"type": "text_delta", "text": piece}}))
        elif block["type"] == "thinking":
            events.append(sse("content_block_start", {"index": index, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            for piece in answer.text_pieces(block["thinking"]):
                events.append(sse("content_block_delta", {
                    "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}))
            events.append(sse("content_block_delta", {"index": index, "delta": {
                "type": "signature_delta", "signature": block["signature"]}}))
        else:
            events.append(sse("content_block_start", {
                "index": index, "content_block": {**block, "input": {}}}))
            for piece in ["", *answer.json_pieces(block["input"])]:
                events.append(sse("content_block_delta", {
                    "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(sse("content_block_stop", {"index": index}))
    events.append(sse("message_delta", {
        "delta": {"stop_reason": answer.stop_reason, "stop_sequence": answer.stop_sequence},
        "usage": {"output_tokens": answer.output_tokens}}))
    events.append(sse("message_stop", {}))
    return events


async def _events(answer: Answer, fault: Fault) -> AsyncIterator[bytes]:
    for i, event in enumerate(stream_events(answer)):
        if fault.stream_error_after is not None and i == fault.stream_error_after:
            yield sse("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})
            return
        if fault.drop_after is not None and i == fault.drop_after:
            return
        yield event
        await asyncio.sleep(0)
