"""A tenant's own detectors steer its requests through a real gateway: a project code only
that tenant declared keeps its request on the self-hosted backend, while the same words from
another tenant go to the external one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.support.servers import ServerThread, serve

PROMPT = "Summarise the status of PRJ-0042 for the steering group."


def policy_yaml(home: int, away: int) -> str:
    return f"""\
version: 1
backends:
  - {{name: home, provider: vllm, base_url: 'http://127.0.0.1:{home}/v1', model: sim-model,
     zone: self_hosted, context_window: 1024}}
  - {{name: away, provider: openai_compat, base_url: 'http://127.0.0.1:{away}/v1',
     model: sim-model, zone: external, context_window: 1024,
     price_per_mtok_usd: {{input: 1.0, output: 2.0}}}}
models:
  auto: {{backends: [away, home], strategy: priority}}
rules:
  - name: confidential-stays-home
    when: {{sensitivity: [pii, secret, phi, confidential]}}
    allow_zones: [self_hosted]
tenants:
  research:
    detectors:
      - {{name: project_code, category: confidential, regex: '\\bPRJ-\\d{{4}}\\b'}}
  sales: {{}}
"""


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    keys = {t: create_key(db_url, t) for t in ("research", "sales")}
    home = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=1, **FAST))).start()
    away = ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=2, **FAST))).start()
    settings = Settings(database_url=db_url, audit_spool_dir=tmp_path / "spool")
    try:
        policy = parse_policy(policy_yaml(home.port, away.port))
        with serve(create_app(settings, policy=policy)) as gw:
            yield gw.url, keys
    finally:
        home.stop()
        away.stop()


def routed(url: str, key: str) -> tuple[str, str]:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="auto", max_tokens=4, messages=[{"role": "user", "content": PROMPT}])
    return raw.headers["x-gateway-backend"], raw.headers["x-gateway-rule"]


def test_only_the_tenant_that_declared_a_detector_is_kept_home_by_it(
    gateway: tuple[str, dict[str, str]],
) -> None:
    url, keys = gateway
    assert routed(url, keys["research"]) == ("home", "confidential-stays-home")
    backend, rule = routed(url, keys["sales"])
    assert backend == "away" and rule != "confidential-stays-home"
