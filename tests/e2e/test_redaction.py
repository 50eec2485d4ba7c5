"""Sensitive data leaves the self_hosted zone only as placeholders when the route redacts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.routing import failover
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, sim_backend
from tests.support.servers import serve

SECRET_MAIL = "bob.smith@gmail.com"


@pytest.fixture
def client(gw: Gateway, tmp_path: Path) -> Iterator[openai.OpenAI]:
    policy = parse_policy(
        "version: 1\nbackends:\n" + sim_backend(gw, "home", "sim-a", "self_hosted")
        + sim_backend(gw, "away", "sim-b", "external")
        + "models:\n  away: [away]\n  home: [home]\nrules:\n  - name: redact-out\n"
        "    redact: true\n"
    )
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    settings = Settings(database_url=db_url, audit_log_path=str(tmp_path / "a.jsonl"))
    key = create_key(db_url, "acme")
    with serve(create_app(settings, policy=policy)) as server:
        with openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as c:
            yield c


@pytest.mark.parametrize("stream", [False, True])
def test_external_backends_see_placeholders_self_hosted_see_originals(
    gw: Gateway, client: openai.OpenAI, stream: bool
) -> None:
    messages = [{"role": "user", "content": f"Please email {SECRET_MAIL} the report."}]
    for model, redacted in (("away", True), ("home", False)):
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, max_tokens=3, stream=stream)
        request_id = raw.headers["x-request-id"]
        if stream:
            list(raw.parse())
        sent = gw.recorded(request_id)["body"]["messages"][0]["content"]  # type: ignore[index]
        assert (SECRET_MAIL not in sent) is redacted
        assert ("[EMAIL_1]" in sent) is redacted


def test_redaction_in_a_thread_gives_the_same_placeholders(
    gw: Gateway, client: openai.OpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long prompts are redacted off the event loop; force that path for a short one.
    monkeypatch.setattr(failover, "REDACT_INLINE_TOKENS", 0)
    messages = [{"role": "user", "content": f"Please email {SECRET_MAIL} the report."}]
    raw = client.chat.completions.with_raw_response.create(
        model="away", messages=messages, max_tokens=3)  # type: ignore[arg-type]
    sent = gw.recorded(raw.headers["x-request-id"])["body"]["messages"][0]["content"]  # type: ignore[index]
    assert sent == "Please email [EMAIL_1] the report."
