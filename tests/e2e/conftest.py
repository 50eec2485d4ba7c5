"""A real gateway under uvicorn on 127.0.0.1 in front of real simulated-vLLM HTTP servers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from gateway.tenancy.login_throttle import LoginThrottle
from gateway.tenancy.repository import TenantRepository
from tests.support.sdk_clients import OpenedClients
from tests.support.sdk_clients import close_opened_clients as close_opened_clients  # autouse
from tests.support.servers import ServerThread, free_port, serve

ADMIN_KEY = "admin-test-key"
MAX_BODY = 256 * 1024
# Fast simulated engines: every sleep is scaled down, so a 20-token answer takes milliseconds.
FAST = {"time_scale": 0.05, "max_model_len": 1024}


@dataclass
class SimControl:
    """One-shot requests to a sim (no client left open: unclosed sockets fail the suite)."""

    url: str

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10)

    def post(self, path: str, json: object) -> httpx.Response:
        resp = httpx.post(self.url + path, json=json, timeout=10)
        resp.raise_for_status()
        return resp

    def delete(self, path: str) -> httpx.Response:
        return httpx.delete(self.url + path, timeout=10)


@dataclass
class Gateway:
    url: str
    key: str
    db_url: str
    audit_path: Path
    sims: dict[str, ServerThread]
    opened: OpenedClients = field(default_factory=OpenedClients)
    app: Any = None  # the served app, when a test may reset its state

    def client(self, **kw: object) -> openai.OpenAI:
        """A client closed when the test ends (see close_opened_clients)."""
        return self.opened.track(
            openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.key, max_retries=0, **kw))

    def async_client(self, **kw: object) -> openai.AsyncOpenAI:
        """Not tracked: its event loop ends with the test, so the test closes it (async with)."""
        return openai.AsyncOpenAI(base_url=f"{self.url}/v1", api_key=self.key, max_retries=0,
                                  **kw)

    def sim(self, name: str) -> SimControl:
        return SimControl(self.sims[name].url)

    def recorded(self, request_id: str) -> dict[str, object]:
        """The request a sim received for a gateway request id."""
        for name in self.sims:
            for entry in self.sim(name).get("/sim/requests").json()["data"]:
                headers = {k.lower(): v for k, v in entry["headers"].items()}
                if headers.get("x-request-id") == request_id:
                    return {"sim": name, "headers": headers, "body": entry["body"]}
        raise AssertionError(f"no sim received {request_id}")

    def clear_faults(self) -> None:
        for name in self.sims:
            self.sim(name).delete("/sim/faults")
        if self.app is not None:  # no test inherits another's wrong admin keys
            self.app.state.components.login_throttle = LoginThrottle()


def sim_backend(gw: Gateway, name: str, sim: str, zone: str, context_window: int = 1024) -> str:
    """A policy `backends:` entry for one of the session's sims, in the given zone."""
    return (f"  - name: {name}\n    provider: vllm\n    base_url: "
            f"http://127.0.0.1:{gw.sims[sim].port}/v1\n    model: sim-model\n"
            f"    zone: {zone}\n    context_window: {context_window}\n")


def route_of(client: openai.OpenAI, model: str, text: str) -> tuple[str, str, str]:
    """One short chat: the backend and rule that served it, and its request id."""
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": text}], max_tokens=3)
    return (raw.headers["x-gateway-backend"], raw.headers["x-gateway-rule"],
            raw.headers["x-request-id"])


def home_and_away_policy(gw: Gateway, extra: str = "") -> str:
    """Sim a self-hosted ("home"), sim b external ("away"). Pool `auto` prefers away unless
    something sensitive was found (rule sensitive-home); pool `out` is away only, redacted
    (rule redact-out). `extra`: more top-level keys."""
    return (
        "version: 1\nbackends:\n" + sim_backend(gw, "home", "sim-a", "self_hosted", 4096)
        + sim_backend(gw, "away", "sim-b", "external", 4096)
        + "models:\n  auto: [away, home]\n  out: [away]\n" + extra
        + "rules:\n"
        "  - name: redact-out\n    when: {model: [out]}\n    redact: true\n"
        "  - name: sensitive-home\n    when: {sensitivity: [pii, phi, secret]}\n"
        "    allow_zones: [self_hosted]\n"
        "  - name: default\n    prefer: [away]\n"
    )


def policy_text(ports: dict[str, int], dead_port: int) -> str:
    def backend(name: str, port: int, model: str = "sim-model") -> str:
        return (f"  - name: {name}\n    provider: vllm\n    base_url: http://127.0.0.1:{port}/v1\n"
                f"    model: {model}\n    context_window: 8192\n    quality_tier: 2\n"
                f"    price_per_mtok_usd: {{input: 1.0, output: 2.0}}\n")

    return (
        "version: 1\nbackends:\n"
        + backend("sim-a", ports["a"]) + backend("sim-b", ports["b"])
        + backend("dead", dead_port)
        + "models:\n  auto: [sim-a, sim-b]\n"
        "  failover: {backends: [dead, sim-a], strategy: priority}\n"
        "  flaky: {backends: [sim-b, sim-a], strategy: priority}\n"
        "  only-b: [sim-b]\n  all-dead: [dead]\n"
        # savings reports compare with this price (no backend behind it)
        "baseline: {name: frontier, price_per_mtok_usd: {input: 2.5, output: 10.0}}\n"
    )


def create_key(db_url: str, tenant: str) -> str:
    async def main() -> str:
        engine = create_engine(db_url)
        try:
            await upgrade(engine)
            repo = TenantRepository(engine)
            key, _ = await repo.create_key(await repo.ensure_tenant(tenant))
            return key
        finally:
            await engine.dispose()

    return asyncio.run(main())


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("gw")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    sims = {
        "a": ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=1, **FAST))),
        "b": ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=2, **FAST))),
    }
    for sim in sims.values():
        sim.start()
    settings = Settings(
        database_url=db_url,
        admin_key=ADMIN_KEY,
        max_body_bytes=MAX_BODY,
        audit_log_path=str(tmp / "audit.jsonl"),
        upstream_read_timeout_s=2.0,
        # Tests inject failures on purpose; keep every backend eligible.
        breaker_failures=1000,
        breaker_min_attempts=10**9,
    )
    policy = parse_policy(policy_text({n: s.port for n, s in sims.items()}, free_port()))
    try:
        app = create_app(settings, policy=policy)
        with serve(app) as server:
            yield Gateway(server.url, key, db_url, tmp / "audit.jsonl",
                          {"sim-a": sims["a"], "sim-b": sims["b"]}, app=app)
    finally:
        for sim in sims.values():
            sim.stop()


@pytest.fixture
def gw(gateway: Gateway) -> Iterator[Gateway]:
    gateway.clear_faults()
    yield gateway
    gateway.clear_faults()


HELLO_BODY = {"messages": [{"role": "user", "content": "Say hello to the gateway."}]}
