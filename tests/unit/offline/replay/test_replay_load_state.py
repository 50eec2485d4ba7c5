"""Replay under the load each row recorded: the demo policy's own traffic, a burst that
saturates the self-hosted pool included, replays to the same decisions and cost; rows from
before the load was recorded replay on an idle fleet, with a note."""

from __future__ import annotations

import random
from dataclasses import replace

from gateway.audit.records import Row, event_row
from gateway.budget.pricing import cost_micro_usd
from gateway.offline.replay.replay import Replayer, rebuild
from gateway.offline.replay.replay_report import ReplayReport
from gateway.package_data import demo_policy_path
from gateway.policy.engine import decide
from gateway.policy.load_state import load_rejected
from gateway.policy.loader import PolicySet, load_policy
from gateway.types import BackendLoad, BackendState, FleetSnapshot, Usage
from tests.support.audit_events import make_event

NOW_S = 1_000.0
IDLE = FleetSnapshot({}, NOW_S)


def busy(*names: str) -> FleetSnapshot:
    """Every engine named full: its batch slots taken, a queue, the KV cache nearly used."""
    load = BackendLoad(scraped_at_s=NOW_S, engine="vllm", running=16, waiting=40,
                       kv_usage=0.99)
    return FleetSnapshot({n: BackendState(load=load) for n in names}, NOW_S)


def demo_traffic(policy: PolicySet, n: int = 400) -> list[Row]:
    """Requests as the demo sends them, each decided live on the fleet of its moment: quiet,
    then a burst that fills llama-8b, then one that fills both engines, then quiet again."""
    rng = random.Random(7)
    phases = [IDLE, busy("llama-8b"), busy("llama-8b", "qwen-32b"), IDLE]
    rows = []
    for i in range(n):
        label, p = rng.choice([("low", 0.1), ("medium", 0.45), ("high", 0.9)])
        sensitive = ("pii",) if rng.random() < 0.1 else ()
        event = make_event(
            ts_unix_s=1_795_000_000.0 + i, endpoint="chat/completions", requested_model="auto",
            complexity=label, p_strong=p, sensitivity=sensitive,
            prompt_tokens=rng.randint(20, 3500), max_output_tokens=rng.choice([None, 64, 400]),
            completion_tokens=rng.randint(5, 300), entry_point="chat")
        request, profile, tenant = rebuild(event_row(event))
        decision = decide(request, profile, tenant, phases[i * len(phases) // n], policy,
                          rotation=i)
        backend = decision.primary
        usage = Usage(event.prompt_tokens, event.completion_tokens)
        rows.append(event_row(replace(
            event, backend=backend.name, zone=backend.zone, rule=decision.rule,
            tried=(backend.name,), rejected=decision.rejected, spill_over=decision.spilled,
            load_rejected=load_rejected(decision.rejected),
            cost_micro_usd=cost_micro_usd(usage, backend.price))))
    return rows


def replay(policy: PolicySet, rows: list[Row]) -> ReplayReport:
    replayer = Replayer(policy)
    replayer.add(rows)
    return replayer.report("default.yaml", "since", "until")


def test_the_demo_policy_replayed_over_its_own_burst_reproduces_it() -> None:
    policy = load_policy(demo_policy_path())
    rows = demo_traffic(policy)
    spilled = sum(r["spill_over"] for r in rows)
    assert spilled > 40  # the burst really did push requests out of the pool
    report = replay(policy, rows)
    assert report.replayed == len(rows) and report.without_load_state == 0
    assert report.changed_share <= 0.02, report.moves
    recorded, new = report.cost.recorded_micro_usd, report.cost.new_micro_usd
    assert abs(new - recorded) <= 0.02 * recorded
    assert report.unfaithful == {}


def test_rows_from_before_the_load_was_recorded_replay_on_an_idle_fleet_with_a_note() -> None:
    policy = load_policy(demo_policy_path())
    old = []
    for r in demo_traffic(policy):
        trace = {k: v for k, v in (r["trace"] or {}).items() if k not in ("api", "load")}
        old.append({**r, "trace": trace or None})
    report = replay(policy, old)
    assert report.without_load_state == len(old)
    assert report.changed_share > 0.1  # every spill-over "un-spills" on an idle fleet
    assert "predate recorded load state" in report.to_json()["idle_fleet_note"]


def test_a_new_self_hosted_pool_is_reported_apart() -> None:
    policy = load_policy(demo_policy_path())
    rows = demo_traffic(policy)
    text = demo_policy_path().read_text().replace(
        "backends: [llama-8b, qwen-32b]\n    objective: cheapest\n"
        "    min_quality_tier: {low: 1, medium: 2, high: 3}\n    spill_to",
        "backends: [qwen-32b]\n    objective: cheapest\n"
        "    min_quality_tier: {low: 1, medium: 2, high: 3}\n    spill_to")
    assert text != demo_policy_path().read_text()
    from gateway.policy.loader import parse_policy

    report = replay(parse_policy(text), rows)
    assert report.changed > 0
    # Requests llama-8b served while qwen-32b's load was never weighed now land on qwen-32b.
    assert sum(report.unfaithful.values()) > 0
    assert all(why.startswith("qwen-32b: its load then was not recorded")
               for why in report.unfaithful)
    # Which requests, by id (the first few per reason), in JSON as in the report.
    (why, n), = report.unfaithful.items()
    ids = report.to_json()["unfaithful_ids"][why]
    assert 0 < len(ids) == min(n, 20) and set(ids) <= {r["request_id"] for r in rows}
    from gateway.offline.replay.replay_table import render_table

    assert f"unfaithful {n}  {why}; e.g. {ids[0]}" in render_table(report)
