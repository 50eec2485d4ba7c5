"""A toy provider kind for tests: declared in one place (TOY), with a local server speaking
its own wire format (toy_api). Registering TOY is the one step that adds it."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
import orjson
from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway.errors import InvalidRequest, UpstreamFailed
from gateway.provider_kinds.kind import OptionsSpec, ProviderKind, UpstreamLimits
from gateway.types import Backend, Endpoint, Payload, ProviderOptions, Usage
from gateway.upstream import DispatchError, UpstreamReply, UpstreamStream

TOY_KEY = "toy-secret"


class ToySpec(OptionsSpec):
    voice: str = Field(default="plain", pattern=r"^[a-z]+$", description="toy: how it talks")


@dataclass(frozen=True, slots=True)
class ToyOptions(ProviderOptions):
    voice: str = "plain"


class ToyProvider:
    """Speaks the toy API: POST {base_url}/generate {"input", "voice", "limit"} →
    {"output", "used": {"in", "out"}}, with its key in `x-toy-key`."""

    def __init__(self, limits: UpstreamLimits) -> None:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(
            limits.read_timeout_s, connect=limits.connect_timeout_s))

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        assert isinstance(backend.options, ToyOptions)
        body = {"input": payload["messages"][-1]["content"], "voice": backend.options.voice,
                "limit": payload.get("max_tokens") or 16}
        try:
            resp = await self._client.post(f"{backend.base_url}/generate", json=body,
                                           headers={"x-toy-key": TOY_KEY})
        except httpx.HTTPError as exc:
            raise DispatchError(UpstreamFailed(f"toy: {exc}"), retryable=True) from exc
        answer = resp.json()
        completion = {
            "id": f"chatcmpl-{request_id}", "object": "chat.completion",
            "created": int(time.time()), "model": backend.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer["output"]}}],
            "usage": {"prompt_tokens": answer["used"]["in"],
                      "completion_tokens": answer["used"]["out"],
                      "total_tokens": answer["used"]["in"] + answer["used"]["out"]},
        }
        return UpstreamReply(orjson.dumps(completion),
                             Usage(answer["used"]["in"], answer["used"]["out"]))

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamStream:
        raise DispatchError(InvalidRequest("the toy API does not stream"), retryable=False)

    async def aclose(self) -> None:
        await self._client.aclose()


# The one place the toy kind is declared.
TOY = ProviderKind(
    name="toy", telemetry_name="toy.example", options=ToySpec,
    compile=lambda spec: ToyOptions(spec.voice), factory=ToyProvider,
)


def toy_api() -> Starlette:
    received: list[dict[str, object]] = []

    async def generate(request: Request) -> JSONResponse:
        if request.headers.get("x-toy-key") != TOY_KEY:
            return JSONResponse({"problem": "who are you"}, status_code=401)
        body = await request.json()
        received.append(body)
        words = str(body["input"]).split()
        return JSONResponse({"output": f"[{body['voice']}] " + " ".join(reversed(words)),
                             "used": {"in": len(words), "out": len(words) + 1}})

    app = Starlette(routes=[Route("/generate", generate, methods=["POST"])])
    app.state.received = received
    return app


def policy(toy_url: str, toy_extra: str = "voice: pirate") -> str:
    return f"""\
version: 1
backends:
  - {{name: toy-1, provider: toy, base_url: "{toy_url}", model: toy-model,
     zone: self_hosted, context_window: 4096, {toy_extra}}}
models:
  toy: [toy-1]
"""
