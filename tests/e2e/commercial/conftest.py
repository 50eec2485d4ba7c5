"""A real gateway under uvicorn in front of local servers that speak the commercial APIs
(Anthropic Messages, Azure OpenAI, OpenAI) exactly, plus a simulated vLLM for the front door.

Keys reach the gateway the production way: the policy names environment variables.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anthropic
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.sim.config import SimConfig
from gateway.sim.server import create_sim_app
from tests.e2e.conftest import FAST, create_key
from tests.support.mock_anthropic import MockAnthropic
from tests.support.mock_azure import MockAzure
from tests.support.mock_openai import MockOpenAI
from tests.support.sdk_clients import OpenedClients
from tests.support.servers import ServerThread, free_port, serve

ENV = {
    "TEST_ANTHROPIC_KEY": "sk-ant-test-key",
    "TEST_ANTHROPIC_WRONG_KEY": "sk-ant-revoked",
    "TEST_AZURE_KEY": "azure-test-key",
    "TEST_AZURE_TOKEN": "entra-test-token",
    "TEST_OPENAI_KEY": "sk-openai-test-key",
}


def policy_text(claude: str, azure: str, gpt: str, sim: str, dead: int) -> str:
    return f"""\
version: 1
backends:
  - {{name: claude, provider: anthropic, base_url: "{claude}/v1", model: claude-sonnet-test,
     api_key_env: TEST_ANTHROPIC_KEY, zone: external, context_window: 200000,
     quality_tier: 4, price_per_mtok_usd: {{input: 3.0, output: 15.0, cached_input: 0.3}}}}
  - {{name: claude-backup, provider: anthropic, base_url: "{claude}", model: claude-backup,
     api_key_env: TEST_ANTHROPIC_KEY, zone: external, context_window: 200000,
     anthropic_version: "2023-06-01", default_max_tokens: 1024}}
  - {{name: claude-badkey, provider: anthropic, base_url: "{claude}", model: claude-sonnet-test,
     api_key_env: TEST_ANTHROPIC_WRONG_KEY, zone: external, context_window: 200000}}
  - {{name: claude-missing, provider: anthropic, base_url: "{claude}", model: claude-missing,
     api_key_env: TEST_ANTHROPIC_KEY, zone: external, context_window: 200000}}
  - {{name: claude-counted, provider: anthropic, base_url: "{claude}", model: claude-small,
     api_key_env: TEST_ANTHROPIC_KEY, zone: external, context_window: 1000,
     tokens: {{count: tokenize, ratio: 4}}}}
  - {{name: claude-guessed, provider: anthropic, base_url: "{claude}/v1", model: claude-small,
     api_key_env: TEST_ANTHROPIC_KEY, zone: external, context_window: 1000,
     tokens: {{count: estimate, ratio: 4}}}}
  - {{name: azure-classic, provider: azure, base_url: "{azure}", deployment: gpt4o,
     api_version: "2024-10-21", model: gpt-4o, api_key_env: TEST_AZURE_KEY, zone: external,
     context_window: 128000}}
  - {{name: azure-v1, provider: azure, base_url: "{azure}/openai/v1", model: gpt4o,
     auth: bearer, api_key_env: TEST_AZURE_TOKEN, zone: external, context_window: 128000}}
  - {{name: azure-o3, provider: azure, base_url: "{azure}/openai", deployment: o3-mini,
     api_version: "2024-12-01-preview", model: o3-mini, api_key_env: TEST_AZURE_KEY,
     zone: external, context_window: 128000}}
  - {{name: azure-nodeploy, provider: azure, base_url: "{azure}", deployment: nope,
     api_version: "2024-10-21", model: gpt-4o, api_key_env: TEST_AZURE_KEY, zone: external,
     context_window: 128000}}
  - {{name: gpt, provider: openai, base_url: "{gpt}/v1", model: gpt-4.1,
     api_key_env: TEST_OPENAI_KEY, zone: external, context_window: 128000}}
  - {{name: gpt-o3, provider: openai, base_url: "{gpt}/v1", model: o3-mini,
     api_key_env: TEST_OPENAI_KEY, zone: external, context_window: 128000}}
  - {{name: local, provider: vllm, base_url: "{sim}/v1", model: sim-model,
     context_window: 8192, quality_tier: 2}}
  - {{name: dead, provider: vllm, base_url: "http://127.0.0.1:{dead}/v1", model: sim-model,
     context_window: 8192}}
models:
  claude-pool: {{backends: [claude, claude-backup], strategy: priority}}
  claude-misconfigured: {{backends: [claude-badkey, claude], strategy: priority}}
  azure-pool: {{backends: [azure-classic, azure-v1], strategy: priority}}
  all-dead: [dead]
  claude-counted: [claude-counted]
  claude-guessed: [claude-guessed]
rules:
  - name: sensitive-stays-home
    when: {{sensitivity: [pii, phi, secret]}}
    allow_zones: [self_hosted]
"""


@dataclass
class Rig:
    url: str
    key: str
    claude: MockAnthropic
    azure: MockAzure
    gpt: MockOpenAI
    audit_path: Path
    opened: OpenedClients = field(default_factory=OpenedClients)

    # Both closed when the test ends (tests/e2e/conftest.py: close_opened_clients).
    def openai(self) -> openai.OpenAI:
        return self.opened.track(
            openai.OpenAI(base_url=f"{self.url}/v1", api_key=self.key, max_retries=0))

    def anthropic(self, **kw: object) -> anthropic.Anthropic:
        return self.opened.track(
            anthropic.Anthropic(base_url=self.url, api_key=self.key, max_retries=0, **kw))


@pytest.fixture(scope="session")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("commercial")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    saved = {name: os.environ.get(name) for name in ENV}
    os.environ.update(ENV)
    claude = MockAnthropic(api_key=ENV["TEST_ANTHROPIC_KEY"])
    azure = MockAzure(api_key=ENV["TEST_AZURE_KEY"], token=ENV["TEST_AZURE_TOKEN"])
    gpt = MockOpenAI(api_key=ENV["TEST_OPENAI_KEY"])
    servers = [ServerThread(claude.app()), ServerThread(azure.app()), ServerThread(gpt.app()),
               ServerThread(create_sim_app(SimConfig(model_name="sim-model", seed=3, **FAST)))]
    for server in servers:
        server.start()
    settings = Settings(database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"),
                        upstream_read_timeout_s=5.0, breaker_failures=1000,
                        breaker_min_attempts=10**9)
    policy = parse_policy(policy_text(*(s.url for s in servers), free_port()))
    try:
        with serve(create_app(settings, policy=policy)) as gateway:
            yield Rig(gateway.url, key, claude, azure, gpt, tmp / "audit.jsonl")
    finally:
        for server in servers:
            server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture
def gw(rig: Rig) -> Iterator[Rig]:
    rig.claude.faults.clear()
    rig.azure.rate_limited = 0
    yield rig
    rig.claude.faults.clear()
    rig.azure.rate_limited = 0
