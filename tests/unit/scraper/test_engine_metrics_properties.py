"""Properties of parse_metrics and derive_load over generated pages: only MetricsParseError
escapes, gauges add up over engines, and no rate, hit rate or latency is ever negative."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.scraper.engine_metrics import MetricsParseError, derive_load, parse_metrics
from gateway.scraper.metric_names import Signal
from gateway.types import BackendLoad
from tests.unit.scraper.exposition import EngineValues, fixture, vllm_text

tokens = st.integers(0, 10**9).map(float)
counts = st.one_of(st.none(), tokens)
latency_totals = st.one_of(
    st.none(), st.tuples(st.floats(0, 1e6, allow_nan=False), st.integers(0, 10**7).map(float))
)
engine_values = st.builds(
    EngineValues,
    running=st.integers(0, 512).map(float),
    waiting=st.integers(0, 4096).map(float),
    kv_usage=st.one_of(st.none(), st.floats(0, 1)),
    prompt_tokens=counts,
    generation_tokens=counts,
    prefix_queries=counts,
    prefix_hits=counts,
    preemptions=counts,
    finished=st.one_of(st.none(), st.dictionaries(st.sampled_from(["stop", "length"]), tokens)),
    ttft=latency_totals,
    itl=latency_totals,
    num_gpu_blocks=st.one_of(st.none(), st.integers(1, 1 << 20)),
    block_size=st.sampled_from([1, 16, 32, 128]),
    kv_bytes_per_token=st.one_of(st.none(), st.integers(1, 1 << 20)),
)
fleets = st.dictionaries(st.sampled_from("0123"), engine_values, min_size=1, max_size=4)


def assert_sane(load: BackendLoad) -> None:
    assert load.running >= 0 and load.waiting >= 0
    for value in (
        load.prompt_tokens_per_s, load.generation_tokens_per_s, load.preemptions_per_s,
        load.requests_finished_per_s, load.ttft_s, load.itl_s, load.kv_bytes_per_token,
    ):  # fmt: skip
        assert value is None or (math.isfinite(value) and value >= 0)
    for fraction in (load.kv_usage, load.prefix_hit_rate):
        assert fraction is None or 0.0 <= fraction <= 1.0


@given(st.text())
def test_any_text_parses_or_raises_metrics_parse_error(text: str) -> None:
    try:
        parse_metrics(text)
    except MetricsParseError:
        pass


@given(st.lists(st.sampled_from(fixture("vllm_current.txt").splitlines()), max_size=80))
def test_any_subset_of_a_real_page_parses_or_raises_metrics_parse_error(lines: list[str]) -> None:
    try:
        sample = parse_metrics("\n".join(lines))
    except MetricsParseError:
        return
    assert_sane(derive_load(None, sample, 1.0, None))


@given(fleets)
def test_gauges_add_up_over_engines(fleet: dict[str, EngineValues]) -> None:
    sample = parse_metrics(vllm_text(fleet))
    assert sample.gauges[Signal.RUNNING] == sum(v.running or 0 for v in fleet.values())
    assert sample.gauges[Signal.WAITING] == sum(v.waiting or 0 for v in fleet.values())
    sized = [v.num_gpu_blocks * v.block_size for v in fleet.values() if v.num_gpu_blocks]
    assert sample.cache.capacity_tokens == (sum(sized) or None)
    usages = [v.kv_usage for v in fleet.values() if v.kv_usage is not None]
    if usages:
        assert min(usages) - 1e-9 <= sample.gauges[Signal.KV_USAGE] <= max(usages) + 1e-9
    else:
        assert Signal.KV_USAGE not in sample.gauges


@settings(max_examples=300)
@given(fleets, fleets, st.floats(0.001, 3600), st.floats(0, 1e6))
def test_derived_load_is_never_negative(
    before: dict[str, EngineValues], after: dict[str, EngineValues], interval_s: float, at_s: float
) -> None:
    # Independent draws: counters go up, down (restarts), appear and vanish at random.
    previous, current = parse_metrics(vllm_text(before)), parse_metrics(vllm_text(after))
    load = derive_load(previous, current, at_s + interval_s, at_s)
    assert_sane(load)
    assert load.interval_s is not None


@given(engine_values, st.integers(0, 10**6), st.floats(0.01, 100))
def test_monotonic_counters_give_the_exact_rate(
    values: EngineValues, added: int, interval_s: float
) -> None:
    base = values.generation_tokens if values.generation_tokens is not None else 0.0
    before = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=base)}))
    after = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=base + added)}))
    rate = derive_load(before, after, 10.0 + interval_s, 10.0).generation_tokens_per_s
    assert rate is not None
    assert math.isclose(rate * interval_s, added, rel_tol=1e-6, abs_tol=1e-6)
