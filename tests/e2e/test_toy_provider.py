"""A provider kind added in one place (tests/support/toy_provider.py: declared once,
registered once): the openai SDK reaches a local server speaking the toy's own wire format
through the gateway, and the request is audited like any other."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.provider_kinds.kind import ProviderKind
from gateway.provider_kinds.registry import PROVIDER_KINDS
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import serve
from tests.support.toy_provider import TOY, policy, toy_api


@pytest.fixture
def toy_kind() -> Iterator[ProviderKind]:
    with PROVIDER_KINDS.registered(TOY) as kind:  # the one registration
        yield kind


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
