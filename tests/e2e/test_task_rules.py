"""Task rules end to end: `task_p` lets a rule act on a task type only where the task model is
sure of it (the audit event keeps the probability, and the stored row's trace too, so replay
can decide such rules on recorded traffic); GATEWAY_TASK_MODEL types requests with a model
fitted to the organisation's own labels."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.app import create_app
from gateway.classify.task_type import DEFAULT_TASK_MODEL_PATH
from gateway.offline.training.task_type_fit import fit_to_labels
from gateway.offline.training.task_type_train import Labelled, write_task_model
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import Gateway, create_key, home_and_away_policy, route_of
from tests.support.audit_mirror import mirror_rows
from tests.support.servers import serve

# The shipped task model: `code` at p ≈ 1.0 and at p ≈ 0.55 (a short snippet to rewrite).
SURE_CODE = "Write a Python function that reverses a linked list in place."
UNSURE_CODE = "Convert this loop to a list comprehension: for x in xs: out.append(x*2)"
RULE = "  - name: sure-code-home\n    when: {task: [code], task_p: {gte: 0.9}}\n" \
       "    prefer: [home]\n"


@pytest.fixture
def served(gw: Gateway, tmp_path: Path) -> Iterator[tuple[openai.OpenAI, Path]]:
    # After the sensitivity rule, so a sensitive code prompt still stays home.
    policy = parse_policy(home_and_away_policy(gw).replace(
        "  - name: default\n", RULE + "  - name: default\n", 1))
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    mirror = tmp_path / "audit.jsonl"
    settings = Settings(database_url=db_url, audit_log_path=str(mirror))
    with serve(create_app(settings, policy=policy)) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
        try:
            yield client, mirror
        finally:
            client.close()


def audit_row(mirror: Path, request_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        match = [r for r in mirror_rows(mirror) if r["request_id"] == request_id]
        if match:
            return match[0]
        assert time.monotonic() < deadline, f"no audit row for {request_id}"
        time.sleep(0.05)


def test_a_task_rule_acts_only_where_the_model_is_sure(
    served: tuple[openai.OpenAI, Path],
) -> None:
    client, mirror = served
    backend, rule, sure_id = route_of(client, "auto", SURE_CODE)
    assert (backend, rule) == ("home", "sure-code-home")
    backend, rule, unsure_id = route_of(client, "auto", UNSURE_CODE)
    assert (backend, rule) == ("away", "default")  # typed `code`, but not surely
    sure, unsure = audit_row(mirror, sure_id), audit_row(mirror, unsure_id)
    assert sure["task"] == unsure["task"] == "code"
    assert sure["task_p"] >= 0.9 > unsure["task_p"] > 0


# An in-house verb the shipped model does not know, which this organisation labels maths.
OWN_WORD = "Please zorblat the quarterly figures for finance."
OWN_LABELS = [Labelled("own", f"Please zorblat the {noun} for {team}.", "math")
              for noun in ("ledger", "invoice", "forecast", "payroll", "quota", "tariff")
              for team in ("finance", "ops", "sales")] + [
    Labelled("own", f"Write a short {kind} about {topic}.", "writing")
    for kind in ("poem", "story", "toast") for topic in ("the sea", "our launch", "spring")]


def test_the_gateway_types_tasks_with_the_model_fitted_to_the_organisation(
    gw: Gateway, tmp_path: Path,
) -> None:
    model = tmp_path / "task_model.json"
    base = json.loads(DEFAULT_TASK_MODEL_PATH.read_text(encoding="utf-8"))
    write_task_model(fit_to_labels(base, OWN_LABELS), model)
    rule = "  - name: maths-home\n    when: {task: [math]}\n    prefer: [home]\n"
    policy = parse_policy(home_and_away_policy(gw).replace(
        "  - name: default\n", rule + "  - name: default\n", 1))
    db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
    key = create_key(db_url, "acme")
    routed = {}
    for fitted in (None, model):
        settings = Settings(database_url=db_url, task_model=fitted)
        with serve(create_app(settings, policy=policy)) as server, openai.OpenAI(
                base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
            routed[fitted] = route_of(client, "auto", OWN_WORD)[:2]
    assert routed == {None: ("away", "default"), model: ("home", "maths-home")}
