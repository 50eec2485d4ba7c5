"""A local OpenAI Chat Completions API for tests, as strict as api.openai.com where it matters.

Rejects a wrong bearer key (401 invalid_api_key), `metadata` without `store: true`, `max_tokens`
on reasoning models (o-series, gpt-5) and unknown parameters, each with OpenAI's error body.
The reply and stream builders are shared with the Azure mock.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

KNOWN = frozenset({
    "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens",
    "n", "stop", "user", "metadata", "store", "tools", "tool_choice", "parallel_tool_calls",
    "response_format", "temperature", "top_p", "frequency_penalty", "presence_penalty",
    "logit_bias", "seed", "logprobs", "top_logprobs", "reasoning_effort", "service_tier",
    "prompt_cache_key", "safety_identifier", "modalities", "audio", "prediction",
})
REASONING = re.compile(r"^(o\d|gpt-5)")
WORDS = ("Hello", " from", " the", " mock", " upstream", ".")


@dataclass
class Recorded:
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class MockOpenAI:
    api_key: str
    requests: list[Recorded] = field(default_factory=list)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    def last(self) -> Recorded:
        return self.requests[-1]

    async def record(self, request: Request) -> tuple[dict[str, str], Any]:
        headers = {k.lower(): v for k, v in request.headers.items()}
        body = orjson.loads(await request.body())
        self.requests.append(Recorded(request.url.path, request.url.query, headers, body))
        return headers, body

    async def _chat(self, request: Request) -> Response:
        headers, body = await self.record(request)
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        problem = openai_problem(body)
        if problem is not None:
            return problem
        return reply(body, f"chatcmpl-mock{next(self.ids)}")


def openai_error(status: int, message: str, *, param: str | None = None,
                 code: str | None = None, error_type: str = "invalid_request_error") -> Response:
    body = {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def openai_problem(body: dict[str, Any]) -> Response | None:
    for name in body:
        if name not in KNOWN:
            return openai_error(400, f"Unrecognized request argument supplied: {name}")
    if "metadata" in body and body.get("store") is not True:
        return openai_error(400, "The 'metadata' parameter is only allowed when 'store' is "
                            "enabled.", param="metadata")
    if REASONING.match(str(body.get("model"))) and "max_tokens" in body:
        return openai_error(400, "Unsupported parameter: 'max_tokens' is not supported with "
                            "this model. Use 'max_completion_tokens' instead.",
                            param="max_tokens", code="unsupported_parameter")
    return None


def usage(body: dict[str, Any], completion: int) -> dict[str, Any]:
    prompt = len(orjson.dumps(body.get("messages")).split())
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}}


def reply(body: dict[str, Any], reply_id: str, extra_choice: dict[str, Any] | None = None,
          extra: dict[str, Any] | None = None) -> Response:
    if body.get("stream"):
        return StreamingResponse(stream_chunks(body, reply_id, extra_choice),
                                 media_type="text/event-stream")
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or len(WORDS)
    words = WORDS[:limit]
    message = {"role": "assistant", "content": "".join(words), "refusal": None,
               "annotations": []}
    choice = {"index": 0, "message": message, "logprobs": None,
              "finish_reason": "stop" if len(words) == len(WORDS) else "length",
              **(extra_choice or {})}
    return Response(orjson.dumps({
        "id": reply_id, "object": "chat.completion", "created": 1_700_000_000,
        "model": body.get("model"), "choices": [choice], "usage": usage(body, len(words)),
        "service_tier": "default", "system_fingerprint": "fp_mock", **(extra or {}),
    }), media_type="application/json")


def chunk(reply_id: str, model: str, delta: dict[str, Any], finish: str | None = None,
          extra_choice: dict[str, Any] | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish,
              **(extra_choice or {})}
    return frame({"id": reply_id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                  "model": model, "system_fingerprint": "fp_mock", "choices": [choice]})


def frame(obj: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


async def stream_chunks(body: dict[str, Any], reply_id: str,
                        extra_choice: dict[str, Any] | None = None) -> AsyncIterator[bytes]:
    model = str(body.get("model"))
    yield chunk(reply_id, model, {"role": "assistant", "content": "", "refusal": None},
                extra_choice=extra_choice)
    for word in WORDS:
        yield chunk(reply_id, model, {"content": word}, extra_choice=extra_choice)
    yield chunk(reply_id, model, {}, "stop", extra_choice=extra_choice)
    if (body.get("stream_options") or {}).get("include_usage"):
        yield frame({"id": reply_id, "object": "chat.completion.chunk",
                     "created": 1_700_000_000, "model": model, "choices": [],
                     "usage": usage(body, len(WORDS))})
    yield b"data: [DONE]\n\n"
