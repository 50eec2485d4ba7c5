"""Policy replay, pure: audit rows re-decided under another policy, and the report."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import yaml

from gateway.audit.records import Row, event_row
from gateway.budget.pricing import cost_micro_usd
from gateway.offline.replay.replay import SKIP_FAILED, SKIP_UNDECIDED, Replayer, rebuild
from gateway.offline.replay.replay_report import DENIED, UNROUTABLE, ReplayReport
from gateway.offline.replay.replay_table import render_table
from gateway.policy.loader import PolicySet, compile_policy, parse_policy
from gateway.policy.schema import PolicyFile
from gateway.types import Endpoint, Usage
from tests.support.audit_events import make_event
from tests.support.replay_policies import BACKENDS, FORGETFUL, IN_HOUSE, OLD


def unchecked(text: str) -> PolicySet:
    """A policy compiled without the semantic checks, which refuse a pii leak outright:
    replay must still see one (an old policy file, or a check with a gap)."""
    return compile_policy(PolicyFile.model_validate(yaml.safe_load(text)))


def row(policy: PolicySet | None = None, **changes: Any) -> Row:
    """An audit row as recorded under `policy`: the cost is what its backend charges."""
    changes.setdefault("endpoint", Endpoint.CHAT.value)
    changes.setdefault("requested_model", "auto")
    changes.setdefault("backend", "small")
    changes.setdefault("zone", "self_hosted")
    changes.setdefault("tried", (changes["backend"],))
    changes.setdefault("predicted_ttft_s", 0.1)
    event = make_event(**changes)
    if policy is not None and "cost_micro_usd" not in changes:
        usage = Usage(event.prompt_tokens, event.completion_tokens, event.cached_tokens)
        price = policy.backends[event.backend or "small"].price
        return {**event_row(event), "cost_micro_usd": cost_micro_usd(usage, price)}
    return event_row(event)


def replay(policy: PolicySet, rows: list[Row]) -> ReplayReport:
    replayer = Replayer(policy)
    replayer.add(rows)
    return replayer.report("new.yaml", "2026-11-17T00:00:00+00:00", "2026-11-18T00:00:00+00:00")


def recorded() -> list[Row]:
    old = parse_policy(OLD)
    hard = {"complexity": "high", "p_strong": 0.9}
    return [
        *(row(old) for _ in range(6)),
        *(row(old, backend="frontier", zone="external", predicted_ttft_s=0.6, **hard)
          for _ in range(3)),
        row(old, sensitivity=("pii",), sensitive_types=("email",), **hard),
    ]


def test_the_recorded_policy_replayed_changes_nothing():
    report = replay(parse_policy(OLD), recorded())
    assert (report.rows_read, report.replayed, report.changed) == (10, 10, 0)
    assert report.cost.delta_micro_usd == 0
    assert report.leaks == () and report.sensitive == 1
    assert report.ttft is not None and report.ttft.mean_delta_s == 0


def test_moving_hard_requests_in_house_is_counted_priced_and_timed():
    old, new = parse_policy(OLD), parse_policy(IN_HOUSE)
    rows = recorded()
    report = replay(new, rows)
    assert report.changed == 3 and report.changed_share == pytest.approx(0.3)
    moves = {(m.before, m.after): (m.requests, m.share) for m in report.moves}
    assert moves[("frontier", "big-a")] == (3, pytest.approx(0.3))
    assert moves[("small", "small")] == (7, pytest.approx(0.7))
    assert {n: (b, a) for n, b, a in report.traffic()} == {
        "big-a": (0, 3), "frontier": (3, 0), "small": (7, 7)}
    usage = Usage(1200, 300)  # make_event's tokens
    saved = 3 * (cost_micro_usd(usage, old.backends["frontier"].price)
                 - cost_micro_usd(usage, new.backends["big-a"].price))
    assert report.cost.delta_micro_usd == -saved
    assert [c.tenant for c in report.cost_by_tenant] == ["acme"]
    assert report.ttft is not None
    assert report.ttft.mean_delta_s == pytest.approx(3 * (0.2 - 0.6) / 10)
    assert report.ttft.p95_delta_s == pytest.approx(0.0)
    assert report.ttft.mean_recorded_s == pytest.approx((7 * 0.1 + 3 * 0.6) / 10)


def test_a_forgotten_custom_category_leaks_and_is_listed():
    old = parse_policy(OLD)
    confidential = row(old, complexity="high", p_strong=0.9, sensitivity=("confidential",),
                       sensitive_types=("custom.project",), request_id="req-secret-plan")
    report = replay(parse_policy(FORGETFUL), [*recorded(), confidential])
    assert [leak.request_id for leak in report.leaks] == ["req-secret-plan"]
    leak = report.leaks[0]
    assert (leak.backend, leak.as_primary, leak.rule) == ("frontier", True, "hard-to-frontier")
    assert (leak.categories, leak.types, leak.tenant) == (("confidential",),
                                                          ("custom.project",), "acme")
    assert (leak.recorded_backend, leak.recorded_zone) == ("small", "self_hosted")
    text = render_table(report)
    assert "!!! 1 SENSITIVE REQUESTS WOULD LEAVE self_hosted WITHOUT REDACTION" in text
    assert "req-secret-plan" in text and "confidential (custom.project)" in text
    assert "exit status 3" in text
    data = report.to_json()
    assert data["leaks"][0]["ts"].startswith("2026-11-")
    assert data["leaks"][0]["backend"] == "frontier"


def test_pii_sent_out_unredacted_leaks_but_redacted_does_not():
    pii = BACKENDS + "rules:\n  - name: hard-out\n    when: {complexity: [high]}\n" \
        "    backends: [frontier]\n"
    rows = recorded()
    report = replay(unchecked(pii), rows)
    assert [(leak.categories, leak.backend) for leak in report.leaks] == [(("pii",), "frontier")]
    redacting = unchecked(pii + "    redact: true\n")
    assert replay(redacting, rows).leaks == ()


def test_a_fallback_outside_counts_as_leaving():
    fallback = BACKENDS + """\
rules:
  - name: hard-home-first
    when: {complexity: [high]}
    backends: [big-a]
    fallbacks: [frontier]
"""
    report = replay(unchecked(fallback), recorded())
    assert [(leak.backend, leak.as_primary) for leak in report.leaks] == [("frontier", False)]
    assert "frontier (as fallback)" in render_table(report)


def test_round_robin_turns_are_not_changes():
    big = parse_policy(OLD)
    rows = [row(big, requested_model="big", backend=b, rule="model-pool")
            for b in ("big-a", "big-b", "big-a", "big-b")]
    report = replay(big, rows)
    assert report.changed == 0
    assert {(m.before, m.after) for m in report.moves} == {("big-a", "big-a"),
                                                           ("big-b", "big-b")}


def test_refusals_are_counted_with_their_reasons_and_recorded_cost():
    deny = OLD.replace("models:\n", "tenants:\n  acme: {models: [big]}\nmodels:\n")
    rows = recorded()
    report = replay(parse_policy(deny), rows)
    assert report.denied == {"tenant 'acme' may not use model 'auto'": 10}
    assert report.changed == 10
    assert {m.after for m in report.moves} == {DENIED}
    assert report.refused_recorded_micro_usd == sum(r["cost_micro_usd"] for r in rows)
    assert report.cost.requests == 0

    renamed = OLD.replace("  auto: {backends", "  other: {backends")
    report = replay(parse_policy(renamed), rows[:2])
    assert list(report.unroutable) == [
        "model_not_found: The model 'auto' does not exist or you do not have access to it."]
    assert {m.after for m in report.moves} == {UNROUTABLE}
    assert "unroutable 2 requests" in render_table(report)


def test_rows_that_never_reached_a_decision_or_failed_are_skipped():
    rows = [
        row(),
        row(rule=None, backend=None, zone=None, status=403, outcome="error",
            error_type="permission_error"),
        row(status=502, outcome="error", error_type="upstream_error"),
    ]
    report = replay(parse_policy(OLD), rows)
    assert (report.rows_read, report.replayed) == (3, 1)
    assert report.skipped == {SKIP_UNDECIDED: 1, SKIP_FAILED: 1}


def test_rows_with_the_same_features_are_decided_once():
    old = parse_policy(OLD)
    report = replay(old, [row(old) for _ in range(500)])
    assert report.replayed == 500 and report.decisions == 1


def test_a_row_rebuilds_what_decide_saw():
    request, profile, tenant = rebuild(row(
        tags=("batch", "eu"), sensitivity=("pii", "secret"), complexity="medium",
        p_strong=0.5, max_output_tokens=64, endpoint="chat.completions", task="code",
        task_p=0.91,
    ))
    assert profile.task is not None and (profile.task.type, profile.task.p) == ("code", 0.91)
    # A row from before the probability was recorded: NaN, which no `task_p` range holds.
    _, older, _ = rebuild(row(task="code"))
    assert older.task is not None and math.isnan(older.task.p)
    assert (request.endpoint, request.model, request.tags, request.payload) == (
        Endpoint.CHAT, "auto", ("batch", "eu"), {})
    assert (profile.prompt_tokens, profile.max_output_tokens) == (1200, 64)
    assert profile.complexity is not None and profile.complexity.label == "medium"
    assert profile.sensitivity == ("pii", "secret") and len(profile.spans) == 2
    assert (tenant.tenant_id, tenant.tenant_name) == ("t-acme", "acme")


def test_the_table_says_what_was_compared_and_how_fast():
    text = render_table(replay(parse_policy(IN_HOUSE), recorded()))
    assert "re-decided under the load it recorded" in text
    assert "10 rows predate recorded load state: replayed on an idle fleet" in text
    assert "none of the 1 sensitive requests replayed would leave" in text
    assert "rows/s" in text and "frontier" in text


THRESHOLDS = BACKENDS + """\
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi, confidential]}
    allow_zones: [self_hosted]
  - name: long-prompts-out
    when: {prompt_tokens: {gt: 6000}}
    backends: [frontier]
  - name: long-answers-big
    when: {max_output_tokens: {gte: 1024}}
    backends: [big-a, big-b]
  - name: likely-hard
    when: {p_strong: {gt: 0.7, lte: 0.95}}
    backends: [frontier]
  - name: sure-code-out
    when: {task: [code], task_p: {gte: 0.8}}
    backends: [frontier]
  - name: code-to-big
    when: {task: [code, math]}
    backends: [big-a, big-b]
"""
CHEAPEST = THRESHOLDS + """\
  - name: cheapest
    objective: cheapest
"""


@pytest.mark.parametrize("policy_text", [THRESHOLDS, CHEAPEST])
def test_the_feature_cache_decides_as_every_row_on_its_own_would(policy_text: str):
    rng = random.Random(7)
    rows = [
        row(
            requested_model=rng.choice(["auto", "big"]),
            backend=rng.choice(["small", "big-a", "big-b", "frontier"]),
            prompt_tokens=rng.choice([rng.randint(1, 40_000), 6000, 6001, 8192 - 1024]),
            max_output_tokens=rng.choice([None, 1023, 1024, rng.randint(1, 9000)]),
            complexity=rng.choice([None, "low", "high"]),
            p_strong=rng.choice([0.7, 0.95, rng.random()]),
            sensitivity=rng.choice([(), (), ("pii",), ("confidential",)]),
            tags=rng.choice([(), ("batch",)]),
            task=rng.choice([None, "code", "math", "chat"]),
            task_p=rng.choice([None, 0.8, rng.random()]),
        )
        for _ in range(3000)
    ]
    for r in rows:
        if r["complexity"] is None:
            r["p_strong"] = None
    policy = unchecked(policy_text)
    cached, alone = Replayer(policy), Replayer(policy, max_cached=0)
    cached.add(rows)
    alone.add(rows)
    a = cached.report("p", "s", "u")
    b = alone.report("p", "s", "u")
    assert a.decisions < b.decisions, (a.decisions, b.decisions)
    assert (a.moves, a.cost, a.cost_by_tenant, a.ttft, a.denied, a.leaks) == (
        b.moves, b.cost, b.cost_by_tenant, b.ttft, b.denied, b.leaks)
    # Refusal messages quote the first row of a key; the counts are the same.
    assert sum(a.unroutable.values()) == sum(b.unroutable.values()) > 0
