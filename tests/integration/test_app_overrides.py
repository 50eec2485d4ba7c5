"""create_app(settings, overrides=...) puts the parts a caller hands in where the settings
would have built their own: requests are dispatched through the injected providers (which are
closed with the app, like the parts it builds), and the fleet is scraped through the
injected HTTP transport (closed with the scrape client at shutdown, as httpx closes one)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai

from gateway.app import create_app
from gateway.assembly.overrides import Overrides
from gateway.policy.loader import parse_policy
from gateway.providers.openai_compat import OpenAICompatProvider
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.types import Backend, Endpoint, Payload
from gateway.upstream import UpstreamReply, UpstreamStream
from tests.e2e.conftest import FAST, create_key
from tests.support.servers import ServerThread, serve


@dataclass
class RecordingProvider:
    """The real OpenAI-compatible provider, noting each call and whether it was closed."""

    inner: OpenAICompatProvider
    calls: list[tuple[str, str]] = field(default_factory=list)
    closed: bool = False

    async def complete(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                       request_id: str) -> UpstreamReply:
        self.calls.append((backend.name, request_id))
        return await self.inner.complete(backend, endpoint, payload, request_id)

    async def stream(self, backend: Backend, endpoint: Endpoint, payload: Payload,
                     request_id: str) -> UpstreamStream:
        self.calls.append((backend.name, request_id))
        return await self.inner.stream(backend, endpoint, payload, request_id)

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()


class CountingTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, counting the paths it carried."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []
        self.closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await super().handle_async_request(request)

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


def policy_yaml(sim_port: int) -> str:
    return (
        "version: 1\nbackends:\n  - name: sim\n    provider: vllm\n"
        f"    base_url: http://127.0.0.1:{sim_port}/v1\n    model: sim-model\n"
        "    context_window: 4096\n    quality_tier: 2\n"
        "models:\n  auto: [sim]\n"
        "telemetry: {scrape_interval_s: 0.1}\n"
    )


def test_injected_providers_and_scrape_transport_are_the_ones_used(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    provider = RecordingProvider(OpenAICompatProvider())
    transport = CountingTransport()
    with serve(create_sim_app(SimConfig(model_name="sim-model", seed=4, **FAST))) as sim:
        overrides = Overrides(policy=parse_policy(policy_yaml(sim.port)),
                              providers={"vllm": provider}, scrape_transport=transport)
        settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool")
        gateway = ServerThread(create_app(settings, overrides=overrides)).start()
        try:
            with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key,
                               max_retries=0) as client:
                raw = client.chat.completions.with_raw_response.create(
                    model="auto", messages=[{"role": "user", "content": "Hello?"}],
                    max_tokens=4)
            deadline = time.monotonic() + 10
            while "/metrics" not in transport.paths and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            gateway.stop()

    assert provider.calls == [("sim", raw.headers["x-request-id"])]
    assert "/metrics" in transport.paths  # the sim's vLLM metrics, through the injected one
    assert transport.closed  # closed with the scrape client that carried it
    assert provider.closed  # handed over: closed with the app
