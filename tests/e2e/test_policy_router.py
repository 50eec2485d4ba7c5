"""`router:` in the policy: a tenant's fitted router, else its model group's, scores the
request's complexity that rules route on, and a router fitted again in place takes effect
without a restart (the policy reloads with it)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest

from gateway.app import create_app
from gateway.classify.complexity_features import FEATURIZER_VERSION
from gateway.classify.router_model import ROUTER_FORMAT
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, route_of, sim_backend
from tests.support.routers import shipped_encoder
from tests.support.servers import serve

QUESTION = "What is the capital of France?"


def write_router(directory: Path, log_odds: float) -> None:
    """A router that gives every prompt the same p_strong (a constant score: only the
    intercept), with thresholds that make a positive score "high" and a negative one "low"."""
    directory.mkdir(parents=True, exist_ok=True)
    document = {"format": ROUTER_FORMAT, "featurizer_version": FEATURIZER_VERSION,
                "intercept": log_odds, "dense": {}, "ngrams": {}, "thresholds": [0.4, 0.6],
                "encoder": shipped_encoder()}
    (directory / "router.json").write_text(json.dumps(document), encoding="utf-8")


@dataclass
class Routed:
    clients: dict[str, openai.OpenAI]
    routers: Path


@pytest.fixture
def routed(gw: Gateway, tmp_path: Path) -> Iterator[Routed]:
    routers = tmp_path / "routers"
    write_router(routers / "acme", 8.0)  # acme's router: everything "high"
    write_router(routers / "group", -8.0)  # pool `tuned`'s router: everything "low"
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "version: 1\nbackends:\n" + sim_backend(gw, "home", "sim-a", "self_hosted", 4096)
        + sim_backend(gw, "away", "sim-b", "external", 4096)
        + "models:\n  auto: [home, away]\n"
        f"  tuned: {{backends: [home, away], router: {routers / 'group'}}}\n"
        f"tenants:\n  acme: {{router: {routers / 'acme'}}}\n  globex: {{}}\n"
        "rules:\n"
        "  - name: sensitive-home\n    when: {sensitivity: [pii, phi, secret]}\n"
        "    allow_zones: [self_hosted]\n"
        "  - name: hard\n    when: {complexity: [high]}\n    prefer: [away]\n"
        "  - name: easy\n    when: {complexity: [low]}\n    prefer: [home]\n"
        "  - name: default\n    prefer: [home]\n", encoding="utf-8")
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    keys = {tenant: create_key(db_url, tenant) for tenant in ("acme", "globex")}
    settings = Settings(database_url=db_url, policy_path=policy, policy_poll_interval_s=0.05)
    with serve(create_app(settings)) as server:
        made = {t: openai.OpenAI(base_url=f"{server.url}/v1", api_key=k, max_retries=0)
                for t, k in keys.items()}
        try:
            yield Routed(made, routers)
        finally:
            for client in made.values():
                client.close()


def test_the_tenants_router_then_the_model_groups_scores_complexity(routed: Routed) -> None:
    acme, globex = routed.clients["acme"], routed.clients["globex"]
    # The tenant's router comes first, whatever the model group.
    assert route_of(acme, "auto", QUESTION)[:2] == ("away", "hard")
    assert route_of(acme, "tuned", QUESTION)[:2] == ("away", "hard")
    # Without a router of its own, the group's router decides; elsewhere the shipped model,
    # which puts a short factual question well below "high".
    assert route_of(globex, "tuned", QUESTION)[:2] == ("home", "easy")
    assert route_of(globex, "auto", QUESTION)[1] != "hard"


def test_a_router_fitted_again_in_place_takes_effect(routed: Routed) -> None:
    acme = routed.clients["acme"]
    assert route_of(acme, "auto", QUESTION)[1] == "hard"
    write_router(routed.routers / "acme", -8.0)
    deadline = time.monotonic() + 10
    while route_of(acme, "auto", QUESTION)[1] != "easy":
        assert time.monotonic() < deadline, "the refitted router was never loaded"
        time.sleep(0.05)
    # A broken refit is refused: the version in force keeps scoring.
    (routed.routers / "acme" / "router.json").write_text("{", encoding="utf-8")
    time.sleep(0.5)
    assert route_of(acme, "auto", QUESTION)[1] == "easy"
