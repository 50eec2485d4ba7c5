"""sensitivity.min_confidence: a lone first name in a word problem (a low-confidence person
finding) no longer keeps the request home, a full name still does, a tenant can keep the
strict default for itself, and a redacting route still masks the name."""

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

WORD_PROBLEM = "James writes a 3-page letter to 2 different friends twice a week. How many pages?"
FULL_NAME = "Draft a reply to Ada Lovelace about her invoice."


@pytest.fixture
def clients(gw: Gateway, tmp_path: Path) -> Iterator[dict[str, openai.OpenAI]]:
    policy = parse_policy(home_and_away_policy(gw, extra=(
        "sensitivity: {min_confidence: 0.7}\n"
        "tenants:\n  acme: {}\n  clinic: {min_confidence: 0}\n")))
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    keys = {tenant: create_key(db_url, tenant) for tenant in ("acme", "clinic")}
    with serve(create_app(Settings(database_url=db_url), policy=policy)) as server:
        made = {t: openai.OpenAI(base_url=f"{server.url}/v1", api_key=k, max_retries=0)
                for t, k in keys.items()}
        try:
            yield made
        finally:
            for client in made.values():
                client.close()


def test_a_lone_first_name_routes_on_complexity_a_full_name_stays_home(
    clients: dict[str, openai.OpenAI],
) -> None:
    assert route_of(clients["acme"], "auto", WORD_PROBLEM)[:2] == ("away", "default")
    assert route_of(clients["acme"], "auto", FULL_NAME)[:2] == ("home", "sensitive-home")
    # The tenant that keeps the strict default routes on every finding.
    assert route_of(clients["clinic"], "auto", WORD_PROBLEM)[:2] == ("home", "sensitive-home")


def test_a_redacting_route_still_masks_the_low_confidence_name(
    gw: Gateway, clients: dict[str, openai.OpenAI],
) -> None:
    _, _, request_id = route_of(clients["acme"], "out", WORD_PROBLEM)
    sent = gw.recorded(request_id)["body"]["messages"][0]["content"]  # type: ignore[index]
    assert sent.startswith("[PERSON_1] writes") and "James" not in sent
