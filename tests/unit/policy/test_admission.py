"""Admission that reads the engine as it is: a queue behind a long prefill with free batch
slots is not saturation, KV claims use the measured reply length and the prefix cache, the
learned TTFT model replaces the prior, and an SLO rule says when it cannot keep its promise."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.policy.capacity import (
    TelemetryPolicy,
    assess,
    kv_need_tokens,
    predict_latency,
    queue_depth,
    queued_ahead,
)
from gateway.policy.engine import decide
from gateway.policy.loader import parse_policy
from gateway.types import (
    BackendLoad,
    BackendState,
    Endpoint,
    FleetSnapshot,
    Profile,
    RejectionKind,
    RouteRequest,
    TenantContext,
    TtftInputs,
    TtftModel,
    kv_claim_tokens,
)

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9001/v1", model: m,
     context_window: 32768, gpu: {type: L4, hourly_usd: 1}, max_num_seqs: 8}
  - {name: b, provider: vllm, base_url: "http://127.0.0.1:9002/v1", model: m,
     context_window: 32768, gpu: {type: L4, hourly_usd: 1}, max_num_seqs: 8}
  - {name: api, provider: openai, base_url: "https://api.example.com/v1", model: gpt,
     zone: external, context_window: 128000, price_per_mtok_usd: {input: 2.5, output: 10},
     latency: {ttft_ms: 400, tpot_ms: 20}}
models:
  auto: [a, b]
rules:
  - name: private
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
  - name: fast
    slo: {ttft_ms: 500}
    spill_to: [api]
"""
NOW = 100.0
TENANT = TenantContext("t1", "acme", "k1")
policy = parse_policy(POLICY)
A = policy.backends["a"]


def state(model: TtftModel | None = None, **fields: object) -> BackendState:
    own = {k: fields.pop(k) for k in list(fields) if k in BackendState.__slots__}
    values: dict[str, object] = {"engine": "vllm", "running": 0, "waiting": 0,
                                 "kv_usage": 0.1, "kv_capacity_tokens": 100_000}
    values.update(fields)
    return BackendState(load=BackendLoad(scraped_at_s=NOW - 0.5, **values),  # type: ignore[arg-type]
                        ttft_model=model, **own)  # type: ignore[arg-type]


def route(fleet: dict[str, BackendState], profile: Profile | None = None):
    request = RouteRequest("r", Endpoint.CHAT, "auto", {"model": "auto"})
    return decide(request, profile or Profile(1000, 200), TENANT, FleetSnapshot(fleet, NOW),
                  policy)


def test_a_queue_behind_a_long_prefill_with_free_slots_is_not_saturation():
    # 2 running, 3 waiting on the step's prefill budget, 8 slots: all 5 have slots.
    behind_prefill = state(running=2, waiting=3)
    assert queue_depth(A, behind_prefill) == (5, 0)
    assert queued_ahead(A, behind_prefill) == 0
    assert assess(A, behind_prefill, 100, NOW, TelemetryPolicy()).saturated is None
    # A full batch is: 8 running and one waiting puts a new request 2nd in line.
    full = state(running=8, waiting=1)
    assert queued_ahead(A, full) == 2
    assert "wait behind 1 queued" in str(assess(A, full, 100, NOW, TelemetryPolicy()).saturated)


def test_before_its_first_scrape_a_backend_is_full_when_the_gateways_own_requests_fill_it():
    # A gateway that just started has no gauges yet: its own in-flight requests are the load.
    assert assess(A, BackendState(in_flight=7), 100, NOW, TelemetryPolicy()).saturated is None
    full = assess(A, BackendState(in_flight=8), 100, NOW, TelemetryPolicy())
    assert "wait behind 0 of the gateway's own requests" in str(full.saturated)
    assert full.kind is RejectionKind.QUEUED
    assert assess(A, BackendState(in_flight=8), 100, NOW,
                  TelemetryPolicy(max_waiting=1)).saturated is None  # one may wait
    # Without a declared batch size nothing says when it is full: judged by its priors.
    api = policy.backends["api"]
    assert assess(api, BackendState(in_flight=500), 100, NOW, TelemetryPolicy()).saturated \
        is None
    # The decision spills to the pool's other engine, then to the API, as with gauges.
    fleet = {"a": BackendState(in_flight=8), "b": BackendState(in_flight=8)}
    decision = route(fleet)
    assert decision.primary.name == "api" and decision.spilled


def test_without_a_known_batch_size_a_queue_still_means_a_full_batch():
    no_slots = parse_policy(POLICY.replace(", max_num_seqs: 8}", "}")).backends["a"]
    assert queued_ahead(no_slots, state(running=2, waiting=3)) == 4
    assert queued_ahead(no_slots, state(running=2, waiting=0, sent_since_scrape=3)) == 0


@given(running=st.integers(0, 20), waiting=st.integers(0, 20), sent=st.integers(0, 10),
       in_flight=st.integers(0, 40))
def test_queue_depth_keeps_every_request_and_never_overfills_the_batch(
    running: int, waiting: int, sent: int, in_flight: int
) -> None:
    s = state(running=running, waiting=waiting, sent_since_scrape=sent, in_flight=in_flight)
    run, wait = queue_depth(A, s)
    assert run + wait == running + waiting + max(sent, in_flight - running - waiting)
    assert run <= max(8, running) and wait >= 0
    assert (queued_ahead(A, s) == 0) == (run + wait < 8)


@given(prompt=st.integers(0, 50_000), max_out=st.one_of(st.none(), st.integers(1, 8192)),
       mean=st.one_of(st.none(), st.floats(0.5, 5000)), hit=st.one_of(st.none(), st.floats(0, 1)))
def test_kv_claim_is_bounded_by_the_worst_case_and_by_max_tokens(
    prompt: int, max_out: int | None, mean: float | None, hit: float | None
) -> None:
    claim = kv_claim_tokens(prompt, max_out, mean, hit)
    assert claim <= kv_need_tokens(prompt, max_out)  # never above prompt + max_tokens
    assert claim - prompt <= (max_out or 512)
    assert claim >= 1 or prompt == 0 or hit == 1.0


WARM = b"p:shared-system-prompt"


def test_kv_need_uses_the_measured_reply_length_and_discounts_a_cached_prefix():
    # Every prompt sent here lately carried a warm prefix: the engine's hits are theirs.
    s = state(prefix_hit_rate=0.75, mean_generation_tokens=40.0,
              warm_prefixes=frozenset({WARM}), warm_prompt_share=1.0)
    assert kv_need_tokens(1000, 512, s, WARM) == 250 + 40
    assert kv_need_tokens(1000, 16, s, WARM) == 250 + 16  # max_tokens bounds the reply
    assert kv_need_tokens(1000, 512) == 1512  # no state: the worst case
    # 1,300 free of which the old claim (prompt + max_tokens) would not fit, the expected does.
    tight = state(kv_usage=0.987, prefix_hit_rate=0.75, mean_generation_tokens=40.0,
                  warm_prefixes=frozenset({WARM}), warm_prompt_share=1.0)
    assert assess(A, tight, kv_need_tokens(1000, 512, tight, WARM), NOW,
                  TelemetryPolicy()).saturated is None


def test_a_prompt_that_shares_no_prefix_claims_all_of_it_whatever_the_engines_hit_rate():
    s = state(prefix_hit_rate=0.75, mean_generation_tokens=40.0,
              warm_prefixes=frozenset({WARM}), warm_prompt_share=0.8)
    assert kv_need_tokens(2000, 512, s) == 2000 + 40  # no prefix key
    assert kv_need_tokens(2000, 512, s, b"p:sent-elsewhere") == 2000 + 40  # not sent here
    assert kv_need_tokens(2000, 512, s, WARM) < 2000  # the shared prefix is discounted


def test_the_engines_hits_are_put_on_the_prompts_that_could_have_hit():
    # 40 % of the engine's prompt tokens hit; half of the tokens sent here carried a warm
    # prefix, so each of those is expected 80 % cached, and the rest not at all.
    s = state(prefix_hit_rate=0.4, warm_prefixes=frozenset({WARM}), warm_prompt_share=0.5)
    assert s.prompt_hit_rate(WARM) == pytest.approx(0.8)
    assert s.prompt_hit_rate(None) == 0.0 and s.prompt_hit_rate(b"p:cold") == 0.0
    # Hits beyond the warm share: at most the whole prompt.
    assert state(prefix_hit_rate=0.9, warm_prefixes=frozenset({WARM}),
                 warm_prompt_share=0.3).prompt_hit_rate(WARM) == 1.0
    # No warm tokens sent yet, no hits measured, or no scrape: nothing is discounted.
    assert state(prefix_hit_rate=0.4, warm_prefixes=frozenset({WARM})).prompt_hit_rate(WARM) \
        == 0.0
    assert state(warm_prefixes=frozenset({WARM}), warm_prompt_share=0.5).prompt_hit_rate(
        WARM) == 0.0
    assert BackendState(warm_prefixes=frozenset({WARM}),
                        warm_prompt_share=0.5).prompt_hit_rate(WARM) == 0.0


@given(hit=st.one_of(st.none(), st.floats(0, 1)), share=st.floats(0, 1), warm=st.booleans())
def test_a_prompts_expected_hit_rate_is_a_share(hit: float | None, share: float,
                                                warm: bool) -> None:
    s = state(prefix_hit_rate=hit, warm_prefixes=frozenset({WARM} if warm else ()),
              warm_prompt_share=share)
    assert 0.0 <= s.prompt_hit_rate(WARM) <= 1.0
    assert s.prompt_hit_rate(None) == 0.0


def test_a_long_prompt_that_shares_nothing_is_not_admitted_into_kv_it_would_not_find():
    """The engine's hit rate is high (shared-prefix traffic), its KV nearly full: a long
    unrelated prompt would have been claimed at a quarter of its size and preempted there;
    it goes to the replica with room. The same length under a prefix sent to a lately is
    mostly cached there and stays."""
    busy = dict(kv_usage=0.96, prefix_hit_rate=0.75, mean_generation_tokens=40.0,
                warm_prefixes=frozenset({WARM}), warm_prompt_share=0.8,
                prefill_tokens_per_s=50_000.0)
    # b has room but a prefill backlog: a is predicted faster, so only KV keeps a request off.
    fleet = {"a": state(**busy),  # type: ignore[arg-type]
             "b": state(kv_usage=0.5, queued_prefill_tokens=10_000, prefill_tokens_per_s=50_000.0)}
    assert route(fleet, Profile(400, 200)).primary.name == "a"
    unrelated = route(fleet, Profile(4000, 200))
    assert unrelated.primary.name == "b"
    assert any(r.backend == "a" and r.reason.startswith("KV cache") for r in unrelated.rejected)
    shared = route(fleet, Profile(4000, 200, affinity_key=WARM))
    assert shared.primary.name == "a"
    assert not any(r.backend == "a" for r in shared.rejected)


def test_the_learned_model_replaces_the_prior_and_reports_its_inputs():
    model = TtftModel(0.02, 0.0001, 0.05, 0.001, samples=50)
    s = state(model, running=4, waiting=1, queued_prefill_tokens=2000, prefix_hit_rate=0.5)
    latency = predict_latency(A, s, 1000)
    assert latency.inputs == TtftInputs(2500.0, 1, 4)
    assert latency.ttft_s == pytest.approx(0.02 + 0.25 + 0.05 + 0.004)
    assert latency.wait_s == pytest.approx(0.2 + 0.05 + 0.004)  # all but base and own prompt
    assert latency.learned_samples == 50
    prior = predict_latency(A, state(running=4), 1000)
    assert prior.learned_samples == 0 and prior.inputs == TtftInputs(1000.0, 0, 4)


def test_the_engines_fastest_mean_ttft_lowers_the_prior_floor():
    assert predict_latency(A, state(), 0).ttft_s == pytest.approx(A.ttft_s)
    assert predict_latency(A, state(engine_ttft_floor_s=0.03), 0).ttft_s == pytest.approx(0.03)
    assert predict_latency(A, state(engine_ttft_floor_s=5.0), 0).ttft_s == pytest.approx(A.ttft_s)


def test_an_slo_rule_keeps_backends_predicted_within_its_target():
    model = TtftModel(0.03, 0.0001, 0.2, 0.0, samples=80)
    decision = route({"a": state(model, waiting=0, running=2), "b": state(model, running=2)})
    assert decision.primary.name in {"a", "b"} and not decision.spilled
    assert decision.slo_miss is None
    note = decision.prediction
    assert note is not None and note.source == "learned" and note.samples == 80
    assert note.ttft_s == pytest.approx(decision.predicted_ttft_s, abs=1e-6)


def test_an_slo_rule_spills_when_home_is_predicted_over_target_and_says_so_when_all_are():
    model = TtftModel(0.03, 0.0001, 0.2, 0.0, samples=80)
    # Free slots (not saturated), but 4 and 5 requests still to start ahead of this one.
    busy = {"a": state(model, running=3, waiting=4), "b": state(model, running=2, waiting=5)}
    spilled = route(busy)
    assert spilled.primary.name == "api" and spilled.spilled and spilled.slo_miss is None
    assert any("over target 500 ms" in r.reason for r in spilled.rejected)
    slow_api = {**busy, "api": BackendState(ttft_s=0.9)}
    missed = route(slow_api)
    assert missed.slo_miss is not None
    assert missed.slo_miss.startswith("no candidate predicted within 500 ms")
    assert "a: predicted TTFT" in missed.slo_miss and "api: predicted TTFT" in missed.slo_miss
    # The least bad is chosen: the API at 900 ms beats 955 ms and 1,155 ms at home.
    assert missed.primary.name == "api"


def test_under_an_slo_a_queue_predicted_within_target_beats_a_spill_target_predicted_over():
    """Both replicas' batches are full (the request would wait for a slot), but the learned
    model, which includes that wait, puts them within 500 ms; the API is predicted at 900 ms.
    Before, any backend merely slow ranked before any where the request would queue."""
    model = TtftModel(0.03, 0.0001, 0.05, 0.0, samples=80)
    full = {"a": state(model, running=8, waiting=2), "b": state(model, running=8, waiting=3)}
    kept = route({**full, "api": BackendState(ttft_s=0.9)})
    assert kept.primary.name == "a" and not kept.spilled and kept.slo_miss is None
    assert kept.predicted_ttft_s < 0.5
    assert [b.name for b in kept.fallbacks] == ["b", "api"]
    # With the API predicted within the target, a full pool spills as it does without an SLO.
    spilled = route({**full, "api": BackendState(ttft_s=0.4)})
    assert spilled.primary.name == "api" and spilled.spilled
    # Queues predicted over the target lose to an API that is only a little over it.
    slow = TtftModel(0.03, 0.0001, 0.4, 0.0, samples=80)
    worse = route({"a": state(slow, running=8, waiting=2), "b": state(slow, running=8,
                                                                      waiting=3),
                   "api": BackendState(ttft_s=0.6)})
    assert worse.primary.name == "api" and worse.slo_miss is not None


def test_a_backend_without_engine_metrics_is_predicted_by_its_learned_model_when_it_has_one():
    api = policy.backends["api"]
    model = TtftModel(0.35, 0.0, 0.0, 0.05, samples=40)
    busy = BackendState(ttft_s=0.4, in_flight=10, ttft_model=model)
    latency = predict_latency(api, busy, 100)
    assert latency.ttft_s == pytest.approx(0.35 + 0.05 * 10)
    assert latency.inputs is not None and latency.inputs.running == 10
    assert latency.learned_samples == 40 and latency.wait_s == pytest.approx(0.5)
    # Without a model: the measured EWMA, then the prior.
    assert predict_latency(api, BackendState(ttft_s=0.45), 100).ttft_s == 0.45
    assert predict_latency(api, BackendState(), 100).ttft_s == pytest.approx(0.4)


def test_a_load_blind_pool_predicts_from_measurements_not_the_engine_model():
    """least_in_flight and round_robin route without engine metrics; the learned model reads
    those metrics, so their predictions stay on the measured EWMA."""
    blind = parse_policy(POLICY.replace("  auto: [a, b]\n", "  auto: {backends: [a, b], "
                                        "strategy: least_in_flight}\n")
                         .replace("    slo: {ttft_ms: 500}\n", ""))
    model = TtftModel(0.03, 0.0001, 0.2, 0.0, samples=80)
    fleet = {n: state(model, running=3, waiting=4, ttft_s=0.07) for n in ("a", "b")}
    request = RouteRequest("r", Endpoint.CHAT, "auto", {"model": "auto"})
    decision = decide(request, Profile(1000, 200), TENANT, FleetSnapshot(fleet, NOW), blind)
    assert decision.predicted_ttft_s == pytest.approx(0.07)
    assert decision.prediction is None or decision.prediction.source != "learned"
