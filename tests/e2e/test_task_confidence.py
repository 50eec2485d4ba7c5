"""`task_p`: a rule acts on a task type only where the task model is sure of it; the audit
event keeps the probability (the stored row's trace has it too) so replay can decide such
rules on recorded traffic."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.app import create_app
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
