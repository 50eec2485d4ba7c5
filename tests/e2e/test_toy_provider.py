"""A provider kind added in one place: the toy kind below is declared once (its policy key,
compile step, token counting, telemetry name and factory) and registered once, and the
openai SDK reaches a local server speaking the toy's own wire format through the gateway."""

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
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway.app import create_app
from gateway.errors import InvalidRequest, UpstreamFailed
from gateway.policy.loader import PolicyError, parse_policy
from gateway.policy.schema import PolicyFile
from gateway.provider_kinds.kind import OptionsSpec, ProviderKind, UpstreamLimits
from gateway.provider_kinds.registry import PROVIDER_KINDS
from gateway.providers.registry import build_providers
from gateway.settings import Settings
from gateway.types import Backend, Endpoint, Payload, ProviderOptions, Usage
from gateway.upstream import DispatchError, UpstreamReply, UpstreamStream
from tests.e2e.conftest import create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import serve

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


@pytest.fixture
def toy_kind() -> Iterator[ProviderKind]:
    with PROVIDER_KINDS.registered(TOY) as kind:  # the one registration
        yield kind


def test_a_registered_kind_validates_its_own_keys_where_written(toy_kind: ProviderKind):
    backend = parse_policy(policy("http://127.0.0.1:1")).backends["toy-1"]
    assert backend.options == ToyOptions("pirate")
    assert backend.telemetry_name == "toy.example"
    assert backend.token_encoding is None and backend.token_ratio == 1.25  # estimated
    with pytest.raises(PolicyError) as info:
        parse_policy(policy("http://127.0.0.1:1", "voice: Loud, volume: 11"), "toy.yaml")
    assert sorted((p.path, p.line) for p in info.value.problems) == [
        ("backends[0].voice", 4), ("backends[0].volume", 4)]
    with pytest.raises(PolicyError, match="voice applies to provider toy only"):
        parse_policy(policy("http://127.0.0.1:1").replace("provider: toy", "provider: vllm"))
    properties = PolicyFile.model_json_schema()["$defs"]["BackendSpec"]["properties"]
    assert "toy" in properties["provider"]["enum"] and "voice" in properties


def test_an_unregistered_kind_is_refused():
    with pytest.raises(PolicyError) as info:
        parse_policy(policy("http://127.0.0.1:1"), "toy.yaml")
    problem = info.value.problems[0]
    assert (problem.path, problem.line) == ("backends[0].provider", 3)
    assert "'anthropic'" in problem.message and "toy" not in problem.message


def test_built_in_kinds_each_get_a_provider_and_kinds_with_one_factory_share_it():
    providers = build_providers(UpstreamLimits())
    assert set(providers) == {"vllm", "openai", "openai_compat", "azure", "anthropic"}
    assert providers["vllm"] is providers["openai_compat"]
    assert len({id(p) for p in providers.values()}) == 4


def test_the_openai_sdk_reaches_the_toy_api_through_the_gateway(
    toy_kind: ProviderKind, tmp_path: Path
):
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    upstream = toy_api()
    with serve(upstream) as toy_server:
        settings = Settings(database_url=db_url, audit_log_path=str(tmp_path / "audit.jsonl"))
        app = create_app(settings, policy=parse_policy(policy(toy_server.url)))
        with serve(app) as gw, openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key,
                                             max_retries=0) as client:
            raw = client.chat.completions.with_raw_response.create(
                model="toy", messages=[{"role": "user", "content": "hello toy world"}],
                max_tokens=5)
            reply = raw.parse()
    assert raw.headers["x-gateway-backend"] == "toy-1"
    assert reply.choices[0].message.content == "[pirate] world toy hello"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (3, 4)
    assert upstream.state.received == [{"input": "hello toy world", "voice": "pirate",
                                        "limit": 5}]
    # The gateway has shut down: its audit writer drained on the way.
    rows = mirror_rows(tmp_path / "audit.jsonl")
    assert [(r["backend"], r["outcome"], r["completion_tokens"]) for r in rows] == [
        ("toy-1", "ok", 4)]
