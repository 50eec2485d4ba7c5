"""A local Azure OpenAI for tests, quirks included (wire-formats.md §1.4 and §3).

Classic `/openai/deployments/{deployment}/chat/completions?api-version=...` and v1
`/openai/v1/chat/completions` (body `model` = deployment); `api-key` header or an Entra
bearer token; typeless errors with string codes ("404", "429", "DeploymentNotFound"); a
prompt containing BLOCKME gets the 400 `content_filter` error with `innererror`; streams open
with a `choices: []` chunk carrying `prompt_filter_results` and carry a content-filter
annotation chunk without `delta` after the finish.
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

from tests.support.mock_openai import (
    WORDS,
    MockOpenAI,
    chunk,
    frame,
    openai_problem,
    reply,
    usage,
)

SAFE = {"filtered": False, "severity": "safe"}
FILTERS = {"hate": SAFE, "self_harm": SAFE, "sexual": SAFE, "violence": SAFE}
PROMPT_FILTERS = [{"prompt_index": 0, "content_filter_results": FILTERS}]


def azure_error(http_status: int, code: str, message: str, **extra: Any) -> Response:
    body = {"error": {"code": code, "message": message, **extra}}
    return Response(orjson.dumps(body), status_code=http_status, media_type="application/json")


@dataclass
class MockAzure(MockOpenAI):
    token: str = "entra-token"
    deployments: frozenset[str] = frozenset({"gpt4o", "o3-mini"})
    rate_limited: int = 0  # the next N requests get Azure's 429
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def app(self) -> Starlette:
        return Starlette(routes=[
            Route("/openai/deployments/{deployment}/chat/completions", self._classic,
                  methods=["POST"]),
            Route("/openai/v1/chat/completions", self._v1, methods=["POST"]),
        ])

    async def _classic(self, request: Request) -> Response:
        headers, body = await self.record(request)
        if "api-version" not in request.query_params:
            return azure_error(404, "404", "Resource not found")
        return self._serve(headers, body, request.path_params["deployment"])

    async def _v1(self, request: Request) -> Response:
        headers, body = await self.record(request)
        return self._serve(headers, body, str(body.get("model")))

    def _serve(self, headers: dict[str, str], body: dict[str, Any], deployment: str) -> Response:
        authorised = headers.get("api-key") == self.api_key or headers.get(
            "authorization") == f"Bearer {self.token}"
        if not authorised:
            return azure_error(401, "401", "Access denied due to invalid subscription key or "
                               "wrong API endpoint. Make sure to provide a valid key for an "
                               "active subscription and use a correct regional API endpoint "
                               "for your resource.")
        if deployment not in self.deployments:
            return azure_error(404, "DeploymentNotFound", "The API deployment for this "
                               "resource does not exist. If you created the deployment within "
                               "the last 5 minutes, please wait a moment and try again.")
        if self.rate_limited:
            self.rate_limited -= 1
            response = azure_error(429, "429", "Requests to the ChatCompletions_Create "
                                   "Operation under Azure OpenAI API version 2024-10-21 have "
                                   "exceeded token rate limit of your current OpenAI S0 pricing "
                                   "tier. Please retry after 1 second.")
            response.headers["retry-after"] = "1"
            return response
        if "BLOCKME" in orjson.dumps(body.get("messages")).decode():
            return _content_filtered()
        problem = openai_problem({**body, "model": deployment})
        if problem is not None:
            return problem
        reply_id = f"chatcmpl-azure{next(self.ids)}"
        if body.get("stream"):
            return StreamingResponse(_azure_stream(body, reply_id, deployment),
                                     media_type="text/event-stream")
        return reply(body, reply_id, extra_choice={"content_filter_results": FILTERS},
                     extra={"prompt_filter_results": PROMPT_FILTERS})


def _content_filtered() -> Response:
    results = {**FILTERS, "violence": {"filtered": True, "severity": "medium"}}
    return azure_error(
        400, "content_filter",
        "The response was filtered due to the prompt triggering Azure OpenAI's content "
        "management policy. Please modify your prompt and retry.",
        param="prompt", type=None, status=400,
        innererror={"code": "ResponsibleAIPolicyViolation", "content_filter_result": results},
    )


async def _azure_stream(body: dict[str, Any], reply_id: str, model: str) -> AsyncIterator[bytes]:
    yield frame({"choices": [], "created": 0, "id": "", "model": "", "object": "",
                 "prompt_filter_results": PROMPT_FILTERS})
    extra = {"content_filter_results": FILTERS}
    yield chunk(reply_id, model, {"role": "assistant", "content": ""})
    for word in WORDS:
        yield chunk(reply_id, model, {"content": word}, extra_choice=extra)
    yield chunk(reply_id, model, {}, "stop")
    # Azure's asynchronous filter reports afterwards, in a choice that has no `delta`.
    yield frame({"id": reply_id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                 "model": model, "choices": [{"index": 0, "finish_reason": None,
                                              "content_filter_offsets": {"check_offset": 0},
                                              **extra}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        yield frame({"id": reply_id, "object": "chat.completion.chunk",
                     "created": 1_700_000_000, "model": model, "choices": [],
                     "usage": usage(body, len(WORDS))})
    yield b"data: [DONE]\n\n"
