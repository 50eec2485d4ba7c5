"""An operator can see why a request was placed where it was: the audit row keeps the TTFT
prediction and its inputs (and an SLO rule's unkept promise), `policy explain` and the fleet
view show them; and prefix affinity keys only prompts whose prefix can be shared."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from gateway.audit.records import event_row
from gateway.classify.profiler import RequestClassifier, affinity_key
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.loader import parse_policy
from gateway.routing.explain import explain, render_table
from gateway.routing.fleet_view import fleet_view
from gateway.types import (
    BackendLoad,
    BackendState,
    Endpoint,
    FleetSnapshot,
    PredictionNote,
    RouteRequest,
    TelemetryNote,
    TenantContext,
    TtftModel,
)
from tests.support.audit_events import make_event

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9001/v1", model: m,
     context_window: 32768, gpu: {type: L4, hourly_usd: 1}, max_num_seqs: 8}
rules:
  - {name: fast, slo: {ttft_ms: 100}}
"""
NOTE = PredictionNote("learned", 0.25, 0.2, 3200, 2, 5, 60, 1.25)


def chat(*messages: tuple[str, str], session: str | None = None) -> RouteRequest:
    payload = {"model": "a", "messages": [{"role": r, "content": c} for r, c in messages]}
    return RouteRequest("r", Endpoint.CHAT, "a", payload, session_id=session)


def test_affinity_keys_shared_prefixes_only() -> None:
    assert affinity_key(chat(("user", "what is the capital of France?"))) is None
    system = chat(("system", "You are a tax assistant."), ("user", "deductions?"))
    same_system = chat(("system", "You are a tax assistant."), ("user", "deductions?"))
    assert affinity_key(system) is not None and affinity_key(system) == affinity_key(same_system)
    assert affinity_key(chat(("user", "hi"), session="s1")) == b"s:s1"  # a session always
    completion = RouteRequest("r", Endpoint.COMPLETIONS, "a", {"model": "a", "prompt": "x y"})
    assert affinity_key(completion) is not None


def test_the_audit_row_keeps_the_prediction_inputs_and_the_unkept_promise() -> None:
    event = replace(make_event(), telemetry=TelemetryNote(running=5, waiting=1, prediction=NOTE),
                    slo_miss="no candidate predicted within 100 ms; sent to a at 250 ms")
    trace = event_row(event)["trace"]
    assert trace["telemetry"]["prediction"] == {
        "source": "learned", "ttft_s": 0.25, "wait_s": 0.2, "prefill_tokens_ahead": 3200,
        "requests_ahead": 2, "running": 5, "samples": 60, "calibration": 1.25}
    assert trace["slo_miss"].startswith("no candidate predicted within 100 ms")
    assert "slo_miss" not in (event_row(make_event())["trace"] or {})


def _busy_state() -> BackendState:
    load = BackendLoad(scraped_at_s=99.5, engine="vllm", running=5, waiting=1, kv_usage=0.2,
                       kv_capacity_tokens=100_000)
    return BackendState(load=load, queued_prefill_tokens=2000,
                        ttft_model=TtftModel(0.02, 0.0001, 0.05, 0.001, samples=60,
                                             calibration=1.5))


def test_policy_explain_shows_the_prediction_and_why_the_target_cannot_be_met() -> None:
    policy = parse_policy(POLICY)
    classifier = RequestClassifier(TokenCounter(), None, SensitivityScanner())
    result = asyncio.run(explain(classifier, policy, TenantContext("t", "acme", "k"),
                                 chat(("user", "hello " * 500)),
                                 FleetSnapshot({"a": _busy_state()}, 100.0)))
    inputs = result["predicted"]["ttft_inputs"]
    assert inputs["source"] == "learned" and inputs["samples"] == 60
    assert inputs["requests_ahead"] == 1 and inputs["running"] == 5
    assert inputs["prefill_tokens_ahead"] > 2000
    assert result["predicted"]["ttft_ms"] == round(inputs["ttft_s"] * 1000, 1)
    assert result["slo_miss"].startswith("no candidate predicted within 100 ms")
    table = render_table(result)
    assert "TTFT from  learned model (60 samples):" in table
    assert "1 requests ahead, 5 running" in table
    assert inputs["calibration"] == 1.5 and "calibrated ×1.50 to recent measurements" in table
    assert "SLO miss   no candidate predicted within 100 ms" in table


def test_the_fleet_view_shows_the_model_its_inputs_and_the_learned_means() -> None:
    policy = parse_policy(POLICY)
    state = replace(_busy_state(), mean_generation_tokens=48.0, engine_ttft_floor_s=0.03,
                    warm_prefixes=frozenset({b"p:1", b"s:2"}), warm_prompt_share=0.41)
    view = fleet_view({"a": {"state": state, "ttft_learned_samples": 60}}, policy)["a"]
    prediction = view["ttft_prediction"]
    assert prediction["source"] == "learned" and prediction["samples"] == 60
    assert prediction["inputs"] == {"prefill_tokens_ahead": 2000.0, "requests_ahead": 1,
                                    "running": 5}
    assert prediction["model"]["per_1k_prefill_tokens_s"] == 0.1
    assert prediction["model"]["calibration"] == 1.5
    # Base, 2,000 tokens ahead, one request ahead, five running.
    assert abs(prediction["predicted_ttft_s"] - (0.02 + 0.2 + 0.05 + 0.005)) < 1e-6
    assert view["mean_generation_tokens"] == 48.0 and view["engine_ttft_floor_s"] == 0.03
    assert view["warm_prefixes"] == 2 and view["warm_prompt_share"] == 0.41
    unlearned = fleet_view({"a": {"state": BackendState()}}, policy)["a"]["ttft_prediction"]
    assert unlearned["source"] == "prior" and unlearned["model"] is None
