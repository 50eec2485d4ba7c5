"""A local OpenAI Responses API (`POST /v1/responses`) for tests, as strict as api.openai.com
where the gateway could get it wrong. Wire-format facts relied on (OpenAI API reference,
"Responses" and "Streaming events"; the openai SDK's `types/responses/*`):

- Request: top-level parameters outside `KNOWN` are refused with 400 `unknown_parameter`
  naming them (so chat fields such as `max_tokens`, `messages` or `stream_options.
  include_usage` are caught); `input` is a string or a list of items; an item or a
  `previous_response_id` naming an id this server never issued is a 404 (the upstream must
  never see the gateway's own ids).
- Response object: `id` `resp_...`, `object: "response"`, `created_at`, `status`, `output`
  items (`message` with `output_text` parts, `function_call` with `call_id`), `usage` with
  `input_tokens`, `input_tokens_details.cached_tokens`, `output_tokens`,
  `output_tokens_details.reasoning_tokens`, `total_tokens`.
- Stream: `event: <type>` and `data: <json>` per event, each with `type` and a
  `sequence_number` from 0; `response.created`, `response.in_progress`, per item
  `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`
  ..., `response.output_text.done`, `response.content_part.done`,
  `response.output_item.done`, then `response.completed`; no `[DONE]` line. A failed
  generation ends with `response.failed` whose `response.error` says why.
- Errors: `{"error": {"message", "type", "param", "code"}}`; 429 with `retry-after`.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.support.mock_openai import Recorded, openai_error

KNOWN = frozenset({
    "model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools",
    "tool_choice", "parallel_tool_calls", "text", "reasoning", "metadata", "store", "stream",
    "stream_options", "previous_response_id", "include", "truncation", "user",
    "safety_identifier", "prompt_cache_key", "service_tier", "background", "conversation",
    "prompt", "top_logprobs", "max_tool_calls",
})
WORDS = ("Hello", " from", " the", " responses", " upstream", ".")


@dataclass
class MockResponsesAPI:
    api_key: str
    requests: list[Recorded] = field(default_factory=list)
    issued: set[str] = field(default_factory=set)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    fail_streams: int = 0  # the next N streams end in response.failed after two deltas
    rate_limited: int = 0  # the next N requests get a 429 with retry-after

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/responses", self._create, methods=["POST"]),
                                 Route("/openai/v1/responses", self._create, methods=["POST"])])

    def last(self) -> Recorded:
        return self.requests[-1]

    def _id(self, prefix: str) -> str:
        issued = f"{prefix}_mock{next(self.ids):04d}"
        self.issued.add(issued)
        return issued

    async def _create(self, request: Request) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = orjson.loads(await request.body())
        self.requests.append(Recorded(request.url.path, request.url.query, headers, body))
        if headers.get("authorization") != f"Bearer {self.api_key}" and \
                headers.get("api-key") != self.api_key:
            return openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        if self.rate_limited:
            self.rate_limited -= 1
            resp = openai_error(429, "Rate limit reached for requests.",
                                code="rate_limit_exceeded", error_type="requests")
            resp.headers["retry-after"] = "7"
            return resp
        problem = self._problem(body)
        if problem is not None:
            return problem
        if body.get("stream"):
            failing = self.fail_streams > 0
            self.fail_streams -= 1 if failing else 0
            return StreamingResponse(self._events(body, failing),
                                     media_type="text/event-stream")
        response = self._response(body, "completed")
        response["output"] = self._output(body)
        return Response(orjson.dumps(response), media_type="application/json")

    def _problem(self, body: dict[str, Any]) -> Response | None:
        for name in body:
            if name not in KNOWN:
                return openai_error(400, f"Unknown parameter: '{name}'.", param=name,
                                    code="unknown_parameter")
        for name in (body.get("stream_options") or {}):
            if name != "include_obfuscation":
                return openai_error(400, f"Unknown parameter: 'stream_options.{name}'.",
                                    param=f"stream_options.{name}", code="unknown_parameter")
        if not isinstance(body.get("model"), str):
            return openai_error(400, "Missing required parameter: 'model'.", param="model",
                                code="missing_required_parameter")
        previous = body.get("previous_response_id")
        if previous is not None and previous not in self.issued:
            return openai_error(404, f"Previous response with id '{previous}' not found.",
                                param="previous_response_id",
                                code="previous_response_not_found")
        items = body.get("input")
        if not isinstance(items, str | list):
            return openai_error(400, "Invalid type for 'input'.", param="input")
        for i, item in enumerate(items if isinstance(items, list) else ()):
            if "id" in item and item["id"] not in self.issued:
                return openai_error(404, f"Item with id '{item['id']}' not found.",
                                    param=f"input[{i}]")
        return None

    def _words(self, body: dict[str, Any]) -> tuple[str, ...]:
        return WORDS[:body.get("max_output_tokens") or len(WORDS)]

    def _forced_tool(self, body: dict[str, Any]) -> str | None:
        choice = body.get("tool_choice")
        return choice.get("name") if isinstance(choice, dict) else None

    def _output(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        tool = self._forced_tool(body)
        if tool is not None:
            return [{"type": "function_call", "id": self._id("fc"), "call_id": self._id("call"),
                     "name": tool, "arguments": "{\"city\":\"Paris\"}", "status": "completed"}]
        return [{"type": "message", "id": self._id("msg"), "role": "assistant",
                 "status": "completed",
                 "content": [{"type": "output_text", "text": "".join(self._words(body)),
                              "annotations": [], "logprobs": []}]}]

    def _response(self, body: dict[str, Any], status: str) -> dict[str, Any]:
        words = len(self._words(body))
        done = status != "in_progress"
        return {
            "id": self._id("resp"), "object": "response", "created_at": 1_700_000_000,
            "status": status, "background": False, "error": None,
            "incomplete_details": None, "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"), "model": body["model"],
            "output": [], "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None}, "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0), "truncation": "disabled", "user": None,
            "metadata": body.get("metadata") or {},
            "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 4},
                      "output_tokens": words, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 12 + words} if done else None,
        }

    async def _events(self, body: dict[str, Any], failing: bool) -> AsyncIterator[bytes]:
        sequence = itertools.count()

        def event(kind: str, **data: Any) -> bytes:
            payload = {"type": kind, "sequence_number": next(sequence), **data}
            return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

        response = self._response(body, "in_progress")
        yield event("response.created", response=response)
        yield event("response.in_progress", response=response)
        item_id = self._id("msg")
        item = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress",
                "content": []}
        yield event("response.output_item.added", output_index=0, item=item)
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        yield event("response.content_part.added", **where, part=part)
        text = ""
        for n, word in enumerate(self._words(body)):
            if failing and n == 2:
                failed = {**response, "status": "failed",
                          "error": {"code": "server_error", "message": "The model failed."}}
                yield event("response.failed", response=failed)
                return
            text += word
            yield event("response.output_text.delta", **where, delta=word, logprobs=[])
        yield event("response.output_text.done", **where, text=text, logprobs=[])
        done_part = {**part, "text": text}
        yield event("response.content_part.done", **where, part=done_part)
        done_item = {**item, "status": "completed", "content": [done_part]}
        yield event("response.output_item.done", output_index=0, item=done_item)
        final = {**self._response(body, "completed"), "id": response["id"],
                 "output": [done_item]}
        yield event("response.completed", response=final)
