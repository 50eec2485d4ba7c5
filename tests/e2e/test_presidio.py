"""Presidio turned on (GATEWAY_PRESIDIO): a name only its entity model finds routes the
request home, is masked where the route redacts, and the gateway's answers are unchanged for
everything else. Runs the real analyzer and spaCy model in the gateway's worker processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.classify.presidio import PresidioUnavailable
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, home_and_away_policy
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import serve

pytest.importorskip("presidio_analyzer")

# The built-in detectors find no one here (a lone given name, no cue); Presidio's model does.
ONLY_PRESIDIO = "Why is Zebulon so impulsive?"
NOBODY = "Why is the sky blue at noon?"


@pytest.fixture
def gateways(gw: Gateway, tmp_path: Path) -> Iterator[dict[str, openai.OpenAI]]:
    """The same policy behind two gateways: built-in detectors only, and with Presidio."""
    policy = parse_policy(home_and_away_policy(gw))
    clients: dict[str, openai.OpenAI] = {}
    with_presidio = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/p.db",
                             audit_log_path=str(tmp_path / "p.jsonl"), presidio=True,
                             presidio_workers=1)
    builtin = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/b.db")
    with serve(create_app(with_presidio, policy=policy)) as p, \
            serve(create_app(builtin, policy=policy)) as b:
        for name, server, settings in (("presidio", p, with_presidio), ("builtin", b, builtin)):
            key = create_key(settings.database_url, "acme")
            clients[name] = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key,
                                          max_retries=0, timeout=60)
        try:
            yield clients
        finally:
            for client in clients.values():
                client.close()


def _ask(client: openai.OpenAI, model: str, text: str, stream: bool = False) -> tuple[str, str]:
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": text}], max_tokens=3, stream=stream)
    if stream:
        list(raw.parse())
    return raw.headers["x-gateway-backend"], raw.headers["x-request-id"]


def test_a_name_only_presidio_finds_keeps_the_request_home(
    gateways: dict[str, openai.OpenAI], tmp_path: Path
) -> None:
    assert _ask(gateways["builtin"], "auto", ONLY_PRESIDIO)[0] == "away"
    assert _ask(gateways["presidio"], "auto", ONLY_PRESIDIO)[0] == "home"
    assert _ask(gateways["presidio"], "auto", NOBODY)[0] == "away"
    rows = _audit_rows(tmp_path / "p.jsonl", expected=2)
    zebulon = next(r for r in rows if r["backend"] == "home")
    assert zebulon["rule"] == "sensitive-home" and zebulon["sensitive_types"] == ["person"]
    assert "Zebulon" not in (tmp_path / "p.jsonl").read_text()  # offsets, never values


@pytest.mark.parametrize("stream", [False, True])
def test_what_presidio_finds_leaves_only_as_a_placeholder(
    gw: Gateway, gateways: dict[str, openai.OpenAI], stream: bool
) -> None:
    backend, request_id = _ask(gateways["presidio"], "out", ONLY_PRESIDIO, stream)
    assert backend == "away"
    sent = gw.recorded(request_id)["body"]["messages"][0]["content"]  # type: ignore[index]
    assert sent == "Why is [PERSON_1] so impulsive?"


def test_presidio_asked_for_but_missing_stops_the_gateway_before_it_serves() -> None:
    with pytest.raises(PresidioUnavailable, match="no spaCy English model"):
        create_app(Settings(presidio=True, presidio_model="en_core_web_nonexistent"))


def _audit_rows(path: Path, expected: int) -> list[dict[str, object]]:
    import time

    deadline = time.monotonic() + 10
    while True:
        rows = mirror_rows(path)
        if len(rows) >= expected or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)
