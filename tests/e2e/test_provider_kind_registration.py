"""A provider kind written and registered in this module alone (the README's "Adding a
provider"): its policy keys, compile step, factory, token counting and engine scrape URL
are one `ProviderKind`. A policy naming it compiles; the openai SDK reaches a local server
speaking the kind's own wire format through the gateway; the gateway asks that server for a
prompt's count where the estimate would refuse it, and scrapes where the kind says its engine
publishes metrics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import orjson
import pytest
from pydantic import Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gateway.app import create_app
from gateway.errors import UpstreamFailed
from gateway.policy.loader import parse_policy
from gateway.provider_kinds.kind import OptionsSpec, ProviderKind, TokenCount, UpstreamLimits
from gateway.provider_kinds.registry import PROVIDER_KINDS
from gateway.settings import Settings
from gateway.types import Backend, Endpoint, EngineFacts, Payload, ProviderOptions, Usage
from gateway.upstream import DispatchError, UpstreamReply, UpstreamStream
from tests.e2e.conftest import create_key
from tests.support.servers import serve

KEY_HEADER = "x-quill-key"
KEY = "quill-secret"
# ~30 o200k tokens, estimated at 4x: 120, over the 64-token window. Quill counts 30 words.
PROMPT = "quill " * 30


# --- the kind: everything the gateway needs to know about it, in one place ---------------


class QuillSpec(OptionsSpec):
    """The policy keys only quill backends accept."""

    ink: str = Field(default="black", pattern=r"^[a-z]+$", description="quill: the ink colour")


@dataclass(frozen=True, slots=True)
class QuillOptions(ProviderOptions):
    ink: str = "black"


def quill_options(backend: Backend) -> QuillOptions:
    options = backend.options
    return options if isinstance(options, QuillOptions) else QuillOptions()


def quill_headers(backend: Backend, request_id: str) -> dict[str, str]:
    return {KEY_HEADER: KEY, "x-request-id": request_id}


class QuillProvider:
    """POST {base_url}/v2/write {"text", "ink", "most"} → {"written", "tokens": {"read",
    "wrote"}}."""

    def __init__(self, limits: UpstreamLimits) -> None:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(
            limits.read_timeout_s, connect=limits.connect_timeout_s))

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        body = {"text": payload["messages"][-1]["content"], "ink": quill_options(backend).ink,
                "most": payload.get("max_tokens") or 16}
        try:
            answer = (await self._client.post(f"{backend.base_url}/v2/write", json=body,
                                              headers=quill_headers(backend, request_id))).json()
        except httpx.HTTPError as exc:
            raise DispatchError(UpstreamFailed(f"quill: {exc}"), retryable=True) from exc
        read, wrote = answer["tokens"]["read"], answer["tokens"]["wrote"]
        completion = {
            "id": f"chatcmpl-{request_id}", "object": "chat.completion",
            "created": int(time.time()), "model": backend.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer["written"]}}],
            "usage": {"prompt_tokens": read, "completion_tokens": wrote,
                      "total_tokens": read + wrote},
        }
        return UpstreamReply(orjson.dumps(completion), Usage(read, wrote))

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamStream:
        raise DispatchError(UpstreamFailed("quill does not stream"), retryable=False)

    async def aclose(self) -> None:
        await self._client.aclose()


def count_body(backend: Backend, endpoint: Endpoint, payload: Payload) -> dict[str, object]:
    return {"text": payload["messages"][-1]["content"]}


QUILL = ProviderKind(
    name="quill", telemetry_name="quill.example", factory=QuillProvider,
    options=QuillSpec, compile=lambda spec: QuillOptions(spec.ink),
    token_count=TokenCount(url=lambda base_url: f"{base_url}/v2/count", body=count_body,
                           headers=quill_headers, answer_field="words"),
    metrics_url=lambda base_url: f"{base_url}/v2/stats",
)


# --- a local server speaking quill's wire format ------------------------------------------


def quill_api() -> Starlette:
    seen: list[tuple[str, object]] = []

    async def write(request: Request) -> JSONResponse:
        if request.headers.get(KEY_HEADER) != KEY:
            return JSONResponse({"problem": "who are you"}, status_code=401)
        body = await request.json()
        seen.append(("write", body))
        words = str(body["text"]).split()
        return JSONResponse({"written": f"({body['ink']}) {words[0]}",
                             "tokens": {"read": len(words), "wrote": 2}})

    async def count(request: Request) -> JSONResponse:
        if request.headers.get(KEY_HEADER) != KEY:
            return JSONResponse({"problem": "who are you"}, status_code=401)
        body = await request.json()
        seen.append(("count", body))
        return JSONResponse({"words": len(str(body["text"]).split())})

    async def stats(request: Request) -> Response:
        seen.append(("stats", None))
        return Response(status_code=404)  # no vLLM metrics here: a scrape error, no more

    app = Starlette(routes=[Route("/v2/write", write, methods=["POST"]),
                            Route("/v2/count", count, methods=["POST"]),
                            Route("/v2/stats", stats)])
    app.state.seen = seen
    return app


def policy(url: str) -> str:
    return f"""\
version: 1
backends:
  - {{name: quill-1, provider: quill, base_url: "{url}", model: quill-model,
     zone: self_hosted, context_window: 64, ink: blue,
     tokens: {{count: tokenize, ratio: 4}}}}
models:
  quill: [quill-1]
"""


@pytest.fixture
def quill_kind() -> Iterator[ProviderKind]:
    with PROVIDER_KINDS.registered(QUILL) as kind:  # the one step that adds it
        yield kind


def test_a_kind_registered_from_this_module_compiles_and_serves(
    quill_kind: ProviderKind, tmp_path: Path
) -> None:
    upstream = quill_api()
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    with serve(upstream) as quill_server:
        compiled = parse_policy(policy(quill_server.url))
        backend = compiled.backends["quill-1"]
        assert backend.options == QuillOptions("blue")
        assert backend.telemetry_name == "quill.example"
        assert backend.tokenize_url == f"{quill_server.url}/v2/count"
        assert backend.engine == EngineFacts(metrics_url=f"{quill_server.url}/v2/stats")
        settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool")
        with serve(create_app(settings, policy=compiled)) as gw, openai.OpenAI(
                base_url=f"{gw.url}/v1", api_key=key, max_retries=0) as client:
            raw = client.chat.completions.with_raw_response.create(
                model="quill", messages=[{"role": "user", "content": PROMPT}], max_tokens=5)
            reply = raw.parse()
            deadline = time.monotonic() + 10
            while ("stats", None) not in upstream.state.seen and time.monotonic() < deadline:
                time.sleep(0.05)
    assert raw.headers["x-gateway-backend"] == "quill-1"
    assert reply.choices[0].message.content == "(blue) quill"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (30, 2)
    seen = upstream.state.seen
    # The estimate (120 tokens) said no; quill's own count (30) let the prompt through.
    assert ("count", {"text": PROMPT}) in seen
    assert ("write", {"text": PROMPT, "ink": "blue", "most": 5}) in seen
    assert ("stats", None) in seen  # scraped where the kind's engine publishes metrics
