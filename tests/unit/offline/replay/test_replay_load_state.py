"""Replay under the load each row recorded: the demo policy's own traffic, a burst that
saturates the self-hosted pool included, replays to the same decisions and cost; rows from
before the load was recorded replay on an idle fleet, with a note."""

from __future__ import annotations

from gateway.audit.records import Row
from gateway.offline.replay.replay import Replayer
from gateway.offline.replay.replay_report import ReplayReport
from gateway.package_data import demo_policy_path
from gateway.policy.loader import PolicySet, load_policy
from tests.support.demo_burst_rows import demo_burst_rows


def demo_traffic(policy: PolicySet, n: int = 400) -> list[Row]:
    return demo_burst_rows(policy, n, seed=7)


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
