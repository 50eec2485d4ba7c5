"""Values declared public in the policy do not keep a request home or get masked on its way
out; a request holding anything else sensitive still stays home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, home_and_away_policy, route_of
from tests.support.servers import serve

SUPPORT = "Reply that the customer can write to help@acme-corp.com at any time."
PRIVATE = "Reply that the customer can write to ada.lovelace@corp.io at any time."


@pytest.fixture
def client(gw: Gateway, tmp_path: Path) -> Iterator[openai.OpenAI]:
    policy = parse_policy(home_and_away_policy(gw, extra=(
        "sensitivity:\n  allow:\n    - {name: support, values: [help@acme-corp.com]}\n")))
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    with serve(create_app(Settings(database_url=db_url), policy=policy)) as server, \
            openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as made:
        yield made


def test_an_allowed_value_routes_like_plain_text_another_address_stays_home(
    client: openai.OpenAI,
) -> None:
    assert route_of(client, "auto", SUPPORT)[:2] == ("away", "default")
    assert route_of(client, "auto", PRIVATE)[:2] == ("home", "sensitive-home")


def test_a_redacting_route_sends_the_allowed_value_as_written(
    gw: Gateway, client: openai.OpenAI,
) -> None:
    _, _, request_id = route_of(client, "out", SUPPORT + " Copy ada.lovelace@corp.io.")
    sent = gw.recorded(request_id)["body"]["messages"][0]["content"]  # type: ignore[index]
    assert "help@acme-corp.com" in sent and "ada.lovelace@corp.io" not in sent
    assert "[EMAIL_1]" in sent
