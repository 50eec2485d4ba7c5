"""decide() with live telemetry: KV admission, saturation, spill-over, staleness, affinity and
latency prediction, all on plain values."""

import pytest

from gateway.errors import NoEligibleBackend
from gateway.policy.capacity import TelemetryPolicy, assess, kv_need_tokens, predict_latency
from gateway.policy.engine import decide
from gateway.policy.loader import parse_policy
from gateway.types import (
    AffinityKind,
    BackendLoad,
    BackendState,
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteRequest,
    TenantContext,
)

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: "http://127.0.0.1:9001/v1", model: m,
     context_window: 32768, gpu: {type: L4, hourly_usd: 1}, max_num_seqs: 4}
  - {name: b, provider: vllm, base_url: "http://127.0.0.1:9002/v1", model: m,
     context_window: 32768, gpu: {type: L4, hourly_usd: 1}, max_num_seqs: 4}
  - {name: api, provider: openai, base_url: "https://api.example.com/v1", model: gpt,
     zone: external, context_window: 128000, price_per_mtok_usd: {input: 2.5, output: 10}}
models:
  auto: [a, b]
rules:
  - name: private
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
    spill_to: [api]
  - name: default
    spill_to: [api]
telemetry: {stale_after_s: 5, max_waiting: 0}
"""
TENANT = TenantContext("t1", "acme", "k1")
NOW = 100.0


def request() -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, "auto", {"model": "auto"})


def state(**load_fields: object) -> BackendState:
    own = {k: load_fields.pop(k) for k in list(load_fields) if k in BackendState.__slots__}
    fields: dict[str, object] = {"engine": "vllm", "running": 0, "waiting": 0,
                                 "kv_usage": 0.1, "kv_capacity_tokens": 10_000}
    fields.update(load_fields)
    return BackendState(load=BackendLoad(scraped_at_s=NOW - 0.5, **fields), **own)  # type: ignore[arg-type]


def route(fleet: dict[str, BackendState], profile: Profile | None = None, rotation: int = 0,
          policy_text: str = POLICY):
    policy = parse_policy(policy_text)
    return decide(request(), profile or Profile(1000, 200), TENANT,
                  FleetSnapshot(fleet, NOW), policy, rotation)


def names(decision) -> list[str]:
    return [b.name for b in decision.candidates]


def test_a_request_that_does_not_fit_in_free_kv_is_not_sent_first():
    decision = route({"a": state(kv_usage=0.95), "b": state(kv_usage=0.2)})
    assert names(decision)[0] == "b"
    reason = next(r.reason for r in decision.rejected if r.backend == "a")
    # 1000 o200k prompt tokens are 1250 in the engine's tokenizer (the default estimate)
    assert "KV cache: needs 1450 tokens" in reason and "500 free" in reason


def test_kv_reserved_since_the_scrape_counts_against_free_kv():
    busy = state(kv_usage=0.1, kv_reserved_tokens=8500, sent_since_scrape=3)
    decision = route({"a": busy, "b": state()})
    assert names(decision)[0] == "b"


def test_every_home_backend_saturated_spills_to_the_api_and_says_so():
    fleet = {"a": state(running=4, waiting=3), "b": state(running=4, waiting=1)}
    decision = route(fleet)
    assert decision.spilled and names(decision) == ["api", "b", "a"]
    assert {r.backend for r in decision.rejected if "wait behind" in r.reason} == {"a", "b"}


def test_traffic_returns_home_when_the_pool_recovers():
    decision = route({"a": state(running=1), "b": state(running=0)})
    assert not decision.spilled and set(names(decision)) == {"a", "b"}


def test_sensitive_requests_never_spill_outside_the_zone():
    fleet = {"a": state(running=4, waiting=3), "b": state(running=4, waiting=1)}
    decision = route(fleet, Profile(1000, 200, sensitivity=("pii",)))
    assert not decision.spilled and names(decision) == ["b", "a"]  # shorter queue first
    assert any(r.backend == "api" and "zone" in r.reason for r in decision.rejected)


def test_batch_slots_filled_by_recent_sends_count_as_a_queue():
    # The scrape said 3 of 4 slots busy; two more were sent since: one of them waits.
    decision = route({"a": state(running=3, sent_since_scrape=2), "b": state(running=1)})
    assert names(decision)[0] == "b"
    assert any("a" == r.backend and "behind 1 queued" in r.reason for r in decision.rejected)
    # All four slots busy and nothing queued yet: the next request would still wait.
    decision = route({"a": state(running=4), "b": state(running=2)})
    assert names(decision)[0] == "b" and any(r.backend == "a" for r in decision.rejected)


def test_stale_metrics_are_avoided_or_fail_closed_as_the_policy_says():
    stale = BackendState(load=BackendLoad(scraped_at_s=NOW - 30, engine="vllm", running=0,
                                          waiting=0))
    decision = route({"a": stale, "b": state()})
    assert names(decision)[:2] == ["b", "a"]
    closed = POLICY.replace("max_waiting: 0}", "max_waiting: 0, on_stale: fail_closed}")
    decision = route({"a": stale, "b": state()}, policy_text=closed)
    assert "a" not in names(decision)
    assert any("stale" in r.reason and "fail closed" in r.reason for r in decision.rejected)
    no_spill = closed.replace("  - name: default\n    spill_to: [api]\n", "")
    with pytest.raises(NoEligibleBackend):
        route({"a": stale, "b": stale}, policy_text=no_spill)


def test_least_loaded_replica_first_when_balancing():
    decision = route({"a": state(queued_prefill_tokens=40_000), "b": state()}, rotation=1)
    assert names(decision)[0] == "b"
    idle = {"a": state(), "b": state()}
    firsts = {names(route(idle, rotation=r))[0] for r in range(2)}
    assert firsts == {"a", "b"}  # equally idle replicas take turns


def test_prefix_affinity_is_sticky_and_bounded_by_load():
    idle = {"a": state(), "b": state()}
    for key, kind in ((b"k1", AffinityKind.PREFIX), (b"k2", AffinityKind.PREFIX),
                      (b"k3", AffinityKind.PREFIX), (b"s:session-9", AffinityKind.SESSION),
                      (b"s:looks-like-a-session", AffinityKind.PREFIX)):
        profile = Profile(1000, 200, affinity_key=key, affinity_kind=kind)
        chosen = {names(route(idle, profile, rotation=r))[0] for r in range(4)}
        assert len(chosen) == 1  # the same replica whatever the rotation
        decision = route(idle, profile)
        assert decision.affinity is kind  # as the profile says, whatever the key's bytes
    spread = {names(route(idle, Profile(1000, 200, affinity_key=bytes([i]))))[0]
              for i in range(32)}
    assert spread == {"a", "b"}  # different prefixes land on different replicas
    owner = names(route(idle, Profile(1000, 200, affinity_key=b"k1")))[0]
    other = "b" if owner == "a" else "a"
    busy = {owner: state(queued_prefill_tokens=20_000), other: state()}
    decision = route(busy, Profile(1000, 200, affinity_key=b"k1"))
    assert names(decision)[0] == other and decision.affinity is None


def test_predicted_ttft_grows_with_the_engine_queue_and_prefill_backlog():
    policy = parse_policy(POLICY)
    backend = policy.backends["a"]
    idle = predict_latency(backend, state(), 1000)
    queued = predict_latency(
        backend, state(running=4, waiting=6, requests_finished_per_s=2.0), 1000
    )
    # Behind 6 waiting (7th in line) with 2 finishing per second.
    assert queued.ttft_s == pytest.approx(idle.ttft_s + 3.5)
    assert idle.wait_s == 0 and queued.wait_s == pytest.approx(3.5)
    backlog = predict_latency(backend, state(queued_prefill_tokens=8000), 1000)
    assert backlog.ttft_s == pytest.approx(idle.ttft_s + 2.0)  # 8,000 tokens at 4,000/s prior
    tpot = predict_latency(backend, state(running=3, decode_tokens_per_s=40.0), 10).tpot_s
    assert tpot == pytest.approx(0.1)  # 4 sequences sharing 40 tokens/s


def test_assess_without_metrics_is_room_and_need_defaults_to_a_typical_reply():
    policy = parse_policy(POLICY)
    assert assess(policy.backends["a"], None, 10, NOW, TelemetryPolicy()).saturated is None
    assert kv_need_tokens(100, None) == 612 and kv_need_tokens(100, 50) == 150


def test_load_blind_strategies_ignore_engine_metrics_for_the_benchmark_baselines():
    full = {"a": state(kv_usage=0.99, running=4, waiting=9), "b": state()}
    rr = POLICY.replace("auto: [a, b]", "auto: {backends: [a, b], strategy: round_robin}")
    firsts = {names(route(full, rotation=r, policy_text=rr))[0] for r in range(2)}
    assert firsts == {"a", "b"}  # takes turns even though a is full
    assert not route(full, policy_text=rr).spilled
    # Nor by the gateway's own count on an engine never scraped: its slots full is not seen.
    unscraped = {"a": BackendState(in_flight=50), "b": BackendState()}
    assert {names(route(unscraped, rotation=r, policy_text=rr))[0] for r in range(2)} == \
        {"a", "b"}
    lif = POLICY.replace("auto: [a, b]", "auto: {backends: [a, b], strategy: least_in_flight}")
    busy = {"a": state(in_flight=1), "b": state(in_flight=5)}
    assert {names(route(busy, rotation=r, policy_text=lif))[0] for r in range(2)} == {"a"}


def test_own_in_flight_requests_count_even_when_the_scrape_missed_them():
    # The scrape landed before two just-sent requests reached the engine's scheduler.
    lagging = state(running=0, in_flight=2, sent_since_scrape=0)
    decision = route({"a": lagging, "b": state(running=1)})
    assert names(decision)[0] == "b"
    full = state(running=1, in_flight=4, sent_since_scrape=0)  # 4 slots: a new one waits
    assert any(r.backend == "a" and "wait behind" in r.reason
               for r in route({"a": full, "b": state()}).rejected)


def test_kv_claimed_by_own_in_flight_requests_counts_even_if_the_scrape_missed_it():
    # The engine had not allocated KV for three just-sent requests when it was scraped.
    lagging = state(kv_usage=0.05, in_flight=3, in_flight_kv_tokens=9000)
    decision = route({"a": lagging, "b": state()})
    assert names(decision)[0] == "b"
    assert any(r.backend == "a" and "KV cache" in r.reason for r in decision.rejected)
