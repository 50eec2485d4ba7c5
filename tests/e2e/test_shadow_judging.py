"""Shadow judging on a real gateway (uvicorn, real Postgres; the budget case on the embedded
SQLite default): a sampled request the cheap backend served is later answered by the strong
backend and both answers scored by the judge, without touching the client's answer; a
sensitive request never reaches a backend its rule does not allow; the daily budget stops it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from gateway.db.engine import create_engine
from gateway.reports.build import Scope, cost_report
from gateway.reports.periods import Period
from gateway.reports.render import ReportTable
from gateway.reports.rollup_repository import Dimension
from gateway.reports.shadow_cost import SHADOW_LINE
from gateway.sim.quality import answer_quality, mark
from tests.e2e.conftest import ADMIN_KEY
from tests.e2e.outcome_rig import STRONG_TIER, WEAK_TIER, Rig, outcome_rig, rig_policy

ALL = "{sample: 1.0, strong: strong, judge: strong, daily_usd: 5}"


@pytest.fixture(scope="module")
def rig(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    with outcome_rig(postgres_url, tmp_path_factory.mktemp("shadow"), ALL) as rig:
        yield rig


def _judged(rig: Rig, request_id: str) -> dict[str, object]:
    rig.wait_for(lambda: any(r["source"] == "shadow" for r in rig.outcomes(request_id)))
    [row] = [r for r in rig.outcomes(request_id) if r["source"] == "shadow"]
    return row


@pytest.mark.postgres
def test_a_cheap_answer_is_judged_against_the_strong_one_later(rig: Rig) -> None:
    prompt = "Prove that the algorithm's invariant holds for every input, step by step."
    request_id, backend, answer = rig.ask(prompt)
    assert backend == "weak"
    assert answer.startswith(mark(answer_quality(prompt, WEAK_TIER)).strip())  # its own
    row = _judged(rig, request_id)
    assert row["served_backend"] == "weak" and row["strong_backend"] == "strong"
    assert row["weak_score"] == round(10 * answer_quality(prompt, WEAK_TIER)) / 10
    assert row["strong_score"] == round(10 * answer_quality(prompt, STRONG_TIER)) / 10
    assert row["strong_score"] > row["weak_score"]  # type: ignore[operator]
    assert isinstance(row["cost_micro_usd"], int) and row["cost_micro_usd"] > 0
    shadow_calls = [body for rid, body in rig.sim_bodies("strong")
                    if rid == f"shadow-{request_id}"]
    assert len(shadow_calls) == 2  # the strong answer, then the verdict
    assert shadow_calls[0]["messages"] == [{"role": "user", "content": prompt}]
    assert "stream" not in shadow_calls[0]
    assert "<answer_a>" in shadow_calls[1]["messages"][-1]["content"]


@pytest.mark.postgres
def test_a_streamed_answer_is_asked_again_for_the_judge(rig: Rig) -> None:
    prompt = "Summarise the weather in one line."
    stream = rig.client().chat.completions.create(
        model="auto", messages=[{"role": "user", "content": prompt}], max_tokens=40,
        stream=True)
    with stream:
        chunks = list(stream)
    assert chunks
    row = _judged(rig, _last_request_id(rig, "weak", prompt))
    assert row["weak_score"] == round(10 * answer_quality(prompt, WEAK_TIER)) / 10


@pytest.mark.postgres
def test_the_strong_backend_itself_is_never_shadowed(rig: Rig) -> None:
    request_id, backend, _ = rig.ask("Hello there.", model="frontier")
    assert backend == "strong"
    later, _, _ = rig.ask("And a second question after it.")  # judged after the first
    _judged(rig, later)
    assert [r for r in rig.outcomes(request_id) if r["source"] == "shadow"] == []


@pytest.mark.postgres
def test_a_sensitive_request_never_leaves_the_zones_its_rule_allows(rig: Rig) -> None:
    """Rule sensitive-home allows self_hosted only: neither the strong backend nor the judge
    (both external) may see it, so it is skipped, counted, and never sent."""
    secret = "Please email jane.doe@acme-corp.com the quarterly report."
    before = rig.shadow_numbers()["skipped_not_allowed"]
    request_id, backend, _ = rig.ask(secret)
    assert backend == "weak"
    later, _, _ = rig.ask("What rhymes with orange?")  # the queue is FIFO, one worker
    _judged(rig, later)
    assert rig.shadow_numbers()["skipped_not_allowed"] == before + 1
    assert [r for r in rig.outcomes(request_id) if r["source"] == "shadow"] == []
    seen = str([body for _, body in rig.sim_bodies("strong")])
    assert "jane.doe@acme-corp.com" not in seen
    assert all(rid != f"shadow-{request_id}" for rid, _ in rig.sim_bodies("strong"))


def test_the_daily_budget_stops_shadow_judging(tmp_path: Path) -> None:
    """1 micro-USD a day: the first judgement runs (nothing spent yet) and costs more than
    that; every later one is skipped and sends nothing. On the embedded SQLite default."""
    tiny = "{sample: 1.0, strong: strong, judge: strong, daily_usd: 0.000001}"
    with outcome_rig(f"sqlite+aiosqlite:///{tmp_path}/gw.db", tmp_path, tiny) as rig:
        first, _, _ = rig.ask("First question of the day.")
        _judged(rig, first)
        later = [rig.ask(f"Question number {n}.")[0] for n in range(3)]
        rig.wait_for(lambda: rig.shadow_numbers()["skipped_budget"] == 3)
        assert rig.shadow_numbers()["judged"] == 1
        shadowed = {rid for rid, _ in rig.sim_bodies("strong") if rid.startswith("shadow-")}
        assert shadowed == {f"shadow-{first}"}
        assert all(rig.outcomes(r) == [] for r in later)
        scraped = httpx.get(f"{rig.url}/metrics", timeout=10,
                            headers={"authorization": f"Bearer {ADMIN_KEY}"}).text
        assert "gateway_shadow_jobs_over_budget_total 3.0" in scraped
        assert "gateway_shadow_judgements_total 1.0" in scraped


def _last_request_id(rig: Rig, sim: str, prompt: str) -> str:
    ids = [rid for rid, body in rig.sim_bodies(sim)
           if body.get("messages") == [{"role": "user", "content": prompt}]
           and not rid.startswith("shadow-")]
    assert ids
    return ids[-1]


EASY = ["Say hi.", "Name a fruit.", "Count to three.", "Greet the team.", "Pick a colour.",
        "Spell cat.", "Name a river.", "Say thanks.", "Name a dog.", "List two days."]
HARD = ["Prove the theorem about this algorithm's complexity, step by step.",
        "Design a lock-free concurrent queue and prove its invariant.",
        "Derive the formal proof that the optimised algorithm terminates."]


@pytest.mark.postgres
def test_router_fit_from_audit_trains_on_the_stored_outcomes(rig: Rig, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gateway.classify.router_model import RouterModel
    from gateway.cli.main import cli

    asked = [rig.ask(f"{p} ({n})")[0] for n in range(2) for p in EASY + HARD]
    for request_id in asked:
        _judged(rig, request_id)
    person = rig.ask("Name a planet.")[0]  # feedback alone: the strong side is estimated
    rig.wait_for(lambda: rig.shadow_numbers()["queue"] == 0)
    rig.feedback({"request_id": person, "label": "good"})
    out = tmp_path / "router"
    result = CliRunner().invoke(cli, [
        "router", "fit", "--from-audit", "--tenant", "acme", "--since", "1d",
        "--database-url", rig.db_url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "shadow-judged" in result.output
    document = json.loads((out / "router.json").read_text())
    assert document["training"]["outcomes"] >= len(asked) + 1
    assert 0 < document["training"]["strong_won"] < document["training"]["outcomes"]
    model = RouterModel.load(out)
    assert model.p_strong(HARD[0]) > model.p_strong(EASY[0])

    # The same traffic replayed with the router: hard prompts now go to the strong backend.
    policy = tmp_path / "by-difficulty.yaml"
    policy.write_text(rig_policy(rig.sims, "{sample: 0, strong: strong, judge: strong, "
                                 "daily_usd: 0}").replace(
        "models:\n  auto: [weak]\n", "models:\n  auto: [weak, strong]\n").replace(
        "    allow_zones: [self_hosted]\n",
        "    allow_zones: [self_hosted]\n  - name: hard\n    when: {complexity: [high]}\n"
        "    backends: [strong]\n  - name: easy\n    backends: [weak]\n"))
    replayed = CliRunner().invoke(cli, [
        "policy", "replay", "--policy", str(policy), "--router", str(out), "--since", "1d",
        "--database-url", rig.db_url, "--format", "json", "--no-progress"])
    assert replayed.exit_code == 0, replayed.output
    router = json.loads(replayed.output)["router"]
    assert router["rescored_rows"] >= len(asked) and router["judged_rows"] >= len(asked)
    assert router["strong_share_recorded"] == 0 < router["strong_share_with_router"]
    assert router["quality_with_router"] > router["quality_recorded"]
    table = CliRunner().invoke(cli, [
        "policy", "replay", "--policy", str(policy), "--router", str(out), "--since", "1d",
        "--database-url", rig.db_url, "--no-progress"])
    assert table.exit_code == 0 and "shadow-judged requests: recorded" in table.output

    other = CliRunner().invoke(cli, [
        "router", "fit", "--from-audit", "--tenant", "globex", "--database-url", rig.db_url,
        "--out", str(tmp_path / "none")])
    assert other.exit_code == 1 and "at least" in other.output  # globex has no outcomes


@pytest.mark.postgres
def test_the_cost_report_shows_shadow_judging_on_its_own_line(rig: Rig) -> None:
    _judged(rig, rig.ask("One more question for the report.")[0])
    rig.wait_for(lambda: rig.shadow_numbers()["queue"] == 0)
    shadow = [r for r in rig.outcomes() if r["source"] == "shadow"]
    everyone, acme = asyncio.run(_cost_tables(rig))
    [line] = [row for row in everyone.rows if row[0] == SHADOW_LINE]
    assert line[1] == len(shadow)  # requests: the judgements
    assert line[-1] == sum(r["cost_micro_usd"] for r in shadow) > 0
    assert everyone.rows[-1] == line  # after the traffic's own lines
    assert everyone.totals is not None and everyone.totals[-1] == sum(
        row[-1] for row in everyone.rows)
    assert all(row[0] != SHADOW_LINE for row in acme.rows)  # the operator's spend


async def _cost_tables(rig: Rig) -> tuple[ReportTable, ReportTable]:
    engine = create_engine(rig.db_url)
    try:
        now = datetime.now(UTC)
        period = Period(now - timedelta(days=1), now + timedelta(minutes=1))
        everyone = await cost_report(engine, period, Scope(None, None, now), Dimension.TENANT)
        acme_id = rig.parts.audit.recent.tenant_of(rig.ask("Whose tenant?")[0])
        acme = await cost_report(engine, period, Scope(acme_id, "acme", now), Dimension.TENANT)
        return everyone, acme
    finally:
        await engine.dispose()
