"""The composition root. create_app(settings, overrides=...) puts the parts a caller hands in
where the settings would have built their own: requests are dispatched through the injected
providers (closed with the app, like the parts it builds), and the fleet is scraped through
the injected HTTP transport (closed with the scrape client, as httpx closes one). And a
start-up that fails half-way closes the parts it had already built."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import openai
import pytest
from sqlalchemy.exc import OperationalError
from starlette.types import ASGIApp, Message

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
from tests.support.servers import ServerThread, free_port, serve


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


def test_a_start_up_that_fails_half_way_closes_what_it_had_built(tmp_path: Path) -> None:
    (tmp_path / "gw.db").mkdir()  # the embedded database's file is a directory: migrating fails
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/gw.db",
                        audit_spool_dir=tmp_path / "spool")
    app = create_app(settings, policy=parse_policy(policy_yaml(free_port())))
    before = logging.getLogRecordFactory()
    sent = asyncio.run(start_up(app))
    assert sent == ["lifespan.startup.failed"]
    # The classifier, built before the database, had put its redaction in front of the
    # gateway's logs: unwinding the start-up took it out again.
    assert logging.getLogRecordFactory() is before


async def start_up(app: ASGIApp) -> list[str]:
    """The ASGI lifespan's start-up, as a server drives it; the messages the app sent."""
    asked = iter([{"type": "lifespan.startup"}])
    sent: list[str] = []

    async def receive() -> Message:
        return next(asked)

    async def send(message: Message) -> None:
        sent.append(message["type"])

    with pytest.raises(OperationalError, match="unable to open database file"):
        await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    return sent
