"""parse_metrics on each engine's page (vLLM current, legacy, data-parallel; SGLang; llama.cpp)
and derive_load's rates, means and resets between two scrapes."""

from __future__ import annotations

import pytest

from gateway.scraper.engine_metrics import (
    CacheConfig,
    MetricsParseError,
    derive_load,
    parse_metrics,
)
from gateway.scraper.metric_names import Engine, Signal
from tests.unit.scraper.exposition import EngineValues, fixture, vllm_text


def total(sample_counters: object) -> float:
    assert isinstance(sample_counters, dict)
    return sum(sample_counters.values())


def test_vllm_current_page() -> None:
    sample = parse_metrics(fixture("vllm_current.txt"))
    assert sample.engine is Engine.VLLM
    assert sample.gauges[Signal.RUNNING] == 4 and sample.gauges[Signal.WAITING] == 6
    assert sample.gauges[Signal.KV_USAGE] == 0.9375
    assert sample.cache == CacheConfig(block_size=32, capacity_tokens=4096, memory_bytes=4 << 20)
    assert total(sample.counters[Signal.PROMPT_TOKENS]) == 1200
    assert total(sample.counters[Signal.PREFIX_HITS]) == 320
    assert total(sample.counters[Signal.REQUESTS_FINISHED]) == 12  # every finished_reason
    ((_, ttft),) = sample.histograms[Signal.TTFT].items()
    assert (ttft.sum, ttft.count) == (8.0, 16.0)

    load = derive_load(None, sample, scraped_at_s=5.0, previous_at_s=None)
    assert (load.engine, load.running, load.waiting) == ("vllm", 4, 6)
    assert load.kv_capacity_tokens == 4096 and load.kv_block_size == 32
    assert load.kv_bytes_per_token == 1024.0
    assert load.scraped_at_s == 5.0
    # One scrape has no interval: every rate and mean waits for the second.
    assert load.interval_s is None and load.prompt_tokens_per_s is None
    assert load.ttft_s is None and load.prefix_hit_rate is None


def test_vllm_legacy_names() -> None:
    sample = parse_metrics(fixture("vllm_legacy.txt"))
    assert sample.gauges[Signal.KV_USAGE] == 0.25  # vllm:gpu_cache_usage_perc
    assert sample.cache == CacheConfig(block_size=16, capacity_tokens=2000 * 16, memory_bytes=None)
    assert total(sample.counters[Signal.PREFIX_QUERIES]) == 4000  # gpu_prefix_cache_queries
    assert total(sample.counters[Signal.PREFIX_HITS]) == 1000
    ((_, itl),) = sample.histograms[Signal.ITL].items()  # vllm:time_per_output_token_seconds
    assert itl.count == 892
    assert derive_load(None, sample, 1.0, None).kv_bytes_per_token is None


def test_first_alias_present_wins() -> None:
    both = fixture("vllm_current.txt") + (
        '# TYPE vllm:gpu_cache_usage_perc gauge\n'
        'vllm:gpu_cache_usage_perc{engine="0",model_name="tiny"} 0.5\n'
    )  # fmt: skip
    assert parse_metrics(both).gauges[Signal.KV_USAGE] == 0.9375


def test_two_data_parallel_engines_add_up() -> None:
    sample = parse_metrics(fixture("vllm_dp2.txt"))
    assert sample.gauges[Signal.RUNNING] == 7 and sample.gauges[Signal.WAITING] == 3
    # Weighted by each engine's cache: (0.9 × 24576 + 0.3 × 8192) / 32768.
    assert sample.gauges[Signal.KV_USAGE] == pytest.approx(0.75)
    assert sample.cache.capacity_tokens == 32768
    load = derive_load(None, sample, 1.0, None)
    assert load.kv_bytes_per_token == (4 << 30) / 32768


def test_data_parallel_kv_usage_without_sizes_is_the_fullest() -> None:
    text = "\n".join(
        line for line in fixture("vllm_dp2.txt").splitlines() if "cache_config_info" not in line
    )
    sample = parse_metrics(text)
    assert sample.gauges[Signal.KV_USAGE] == 0.9
    assert sample.cache == CacheConfig()


def test_llamacpp_page() -> None:
    sample = parse_metrics(fixture("llamacpp.txt"))
    assert sample.engine is Engine.LLAMACPP
    assert sample.gauges == {Signal.RUNNING: 2, Signal.WAITING: 1, Signal.KV_USAGE: 0.125}
    # llama.cpp counts cached prompt tokens apart: both together are the prompt (and queries).
    assert total(sample.counters[Signal.PROMPT_TOKENS]) == 1200
    assert total(sample.counters[Signal.PREFIX_QUERIES]) == 1200
    assert total(sample.counters[Signal.PREFIX_HITS]) == 300
    assert sample.histograms == {}
    later = parse_metrics(
        fixture("llamacpp.txt")
        .replace("prompt_tokens_total 900", "prompt_tokens_total 1000")
        .replace("prompt_tokens_cached_total 300", "prompt_tokens_cached_total 400")
    )
    load = derive_load(sample, later, 12.0, 10.0)
    assert load.prefix_hit_rate == 0.5 and load.prompt_tokens_per_s == 100.0
    assert load.ttft_s is None and load.requests_finished_per_s is None
    assert load.kv_capacity_tokens is None


def test_sglang_page() -> None:
    sample = parse_metrics(fixture("sglang.txt"))
    assert sample.engine is Engine.SGLANG
    # Two TP ranks of one scheduler report the same queue: counted once.
    assert sample.gauges[Signal.RUNNING] == 12 and sample.gauges[Signal.WAITING] == 5
    assert sample.gauges[Signal.KV_USAGE] == 0.6
    assert sample.cache == CacheConfig(capacity_tokens=100000)
    assert total(sample.counters[Signal.PREEMPTIONS]) == 4
    later = parse_metrics(
        fixture("sglang.txt")
        .replace("prompt_tokens_total{model_name=\"qwen\"} 80000.0",
                 "prompt_tokens_total{model_name=\"qwen\"} 81000.0")
        .replace("cached_tokens_total{model_name=\"qwen\"} 20000.0",
                 "cached_tokens_total{model_name=\"qwen\"} 20250.0")
        .replace("num_requests_total{model_name=\"qwen\"} 150.0",
                 "num_requests_total{model_name=\"qwen\"} 160.0")
    )  # fmt: skip
    load = derive_load(sample, later, 2.0, 0.0)
    assert load.prefix_hit_rate == 0.25  # Δcached / Δprompt
    assert load.requests_finished_per_s == 5.0
    assert load.prompt_tokens_per_s == 500.0


def test_sglang_hit_rate_gauge_when_the_counters_are_missing() -> None:
    text = "\n".join(
        line for line in fixture("sglang.txt").splitlines() if "cached_tokens" not in line
    )
    load = derive_load(None, parse_metrics(text), 1.0, None)
    assert load.prefix_hit_rate == 0.42


def test_rates_and_means_over_the_interval() -> None:
    before = parse_metrics(vllm_text({"0": EngineValues(
        prompt_tokens=100, generation_tokens=1000, prefix_queries=100, prefix_hits=20,
        preemptions=1, finished={"stop": 3, "length": 1}, ttft=(2.0, 4), itl=(10.0, 1000))}))
    after = parse_metrics(vllm_text({"0": EngineValues(
        running=2, waiting=1, kv_usage=0.5,
        prompt_tokens=300, generation_tokens=1400, prefix_queries=300, prefix_hits=120,
        preemptions=3, finished={"stop": 5, "length": 3}, ttft=(3.0, 8), itl=(12.0, 1400))}))
    load = derive_load(before, after, scraped_at_s=12.0, previous_at_s=10.0)
    assert load.interval_s == 2.0
    assert (load.running, load.waiting, load.kv_usage) == (2, 1, 0.5)
    assert load.prompt_tokens_per_s == 100.0
    assert load.generation_tokens_per_s == 200.0
    assert load.prefix_hit_rate == 0.5
    assert load.preemptions_per_s == 1.0
    assert load.requests_finished_per_s == 2.0
    assert load.ttft_s == 0.25
    assert load.itl_s == pytest.approx(0.005)


def test_idle_interval_has_no_hit_rate_or_latency() -> None:
    sample = parse_metrics(vllm_text({"0": EngineValues(prefix_queries=50, ttft=(1.0, 2))}))
    load = derive_load(sample, sample, 2.0, 1.0)
    assert load.prompt_tokens_per_s == 0.0 and load.preemptions_per_s == 0.0
    assert load.prefix_hit_rate is None  # no queries in the interval
    assert load.ttft_s is None and load.itl_s is None  # nothing finished its first token


def test_counter_reset_counts_from_zero() -> None:
    before = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=5000, ttft=(9.0, 10))}))
    after = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=40, ttft=(0.5, 2))}))
    load = derive_load(before, after, 11.0, 10.0)
    assert load.generation_tokens_per_s == 40.0
    assert load.ttft_s == 0.25


def test_one_data_parallel_engine_restarting_does_not_skew_the_other() -> None:
    before = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=1000),
                                      "1": EngineValues(generation_tokens=1000)}))
    after = parse_metrics(vllm_text({"0": EngineValues(generation_tokens=1100),
                                     "1": EngineValues(generation_tokens=30)}))  # fmt: skip
    assert derive_load(before, after, 1.0, 0.0).generation_tokens_per_s == 130.0


def test_a_series_first_seen_counts_whole() -> None:
    before = parse_metrics(vllm_text({"0": EngineValues(finished={"stop": 4})}))
    after = parse_metrics(vllm_text({"0": EngineValues(finished={"stop": 5, "abort": 2})}))
    assert derive_load(before, after, 1.0, 0.0).requests_finished_per_s == 3.0


@pytest.mark.parametrize(
    ("previous_at_s", "scraped_at_s"), [(None, 1.0), (1.0, 1.0), (2.0, 1.0)]
)
def test_no_usable_interval_gives_no_rates(
    previous_at_s: float | None, scraped_at_s: float
) -> None:
    sample = parse_metrics(vllm_text({"0": EngineValues()}))
    load = derive_load(sample, sample, scraped_at_s, previous_at_s)
    assert load.interval_s is None and load.generation_tokens_per_s is None


def test_a_different_engine_is_not_a_baseline() -> None:
    llama = parse_metrics(fixture("llamacpp.txt"))
    sglang = parse_metrics(fixture("sglang.txt"))
    load = derive_load(llama, sglang, 2.0, 1.0)
    assert load.engine == "sglang" and load.prompt_tokens_per_s is None


def test_signal_missing_from_either_scrape_is_none() -> None:
    with_it = parse_metrics(vllm_text({"0": EngineValues(preemptions=3)}))
    without = parse_metrics(vllm_text({"0": EngineValues(preemptions=None)}))
    assert derive_load(with_it, without, 2.0, 1.0).preemptions_per_s is None
    assert derive_load(without, with_it, 2.0, 1.0).preemptions_per_s is None


def test_out_of_range_and_non_finite_values_are_tamed() -> None:
    sample = parse_metrics(vllm_text({"0": EngineValues(kv_usage=1.7, running=-3)}))
    assert sample.gauges[Signal.KV_USAGE] == 1.0 and sample.gauges[Signal.RUNNING] == 0
    nan_usage = parse_metrics(vllm_text({"0": EngineValues(kv_usage=float("nan"))}))
    assert Signal.KV_USAGE not in nan_usage.gauges
    negative = parse_metrics(vllm_text({"0": EngineValues(prompt_tokens=-5)}))
    assert Signal.PROMPT_TOKENS not in negative.counters


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<html><body>Not Found</body></html>", "no vLLM, SGLang or llama.cpp"),
        ("", "no vLLM, SGLang or llama.cpp"),
        ("# HELP process_open_fds x\nprocess_open_fds 3\n", "no vLLM, SGLang or llama.cpp"),
        ('vllm:num_requests_running{engine="0" 3\n', "malformed"),
        ('vllm:num_requests_running{engine="0"} three\n', "malformed"),
        ('vllm:num_requests_waiting{engine="0"} 3\n', "without vllm:num_requests_running"),
        ("llamacpp:requests_processing 1\n", "without llamacpp:requests_deferred"),
    ],
)
def test_unusable_text_is_a_metrics_parse_error(text: str, message: str) -> None:
    with pytest.raises(MetricsParseError, match=message) as info:
        parse_metrics(text)
    assert isinstance(info.value, ValueError)


def test_truncated_page_is_an_error_only_where_it_matters() -> None:
    page = fixture("vllm_current.txt")
    cut_in_running = page[: page.index("vllm:num_requests_running{") + 40]
    with pytest.raises(MetricsParseError):
        parse_metrics(cut_in_running + "\n")
    # Cut inside a bucket line the scraper never reads: everything before it still counts.
    cut_in_bucket = page[: page.index('le="80.0"') + 5]
    assert parse_metrics(cut_in_bucket).gauges[Signal.RUNNING] == 4


def test_reply_length_is_the_per_request_histogram_over_the_interval() -> None:
    """vLLM observes each finished request's generated tokens: Δsum ÷ Δcount is the mean
    reply length of the requests that finished between two scrapes, however long they ran."""
    before = parse_metrics(vllm_text({"0": EngineValues(replies=(5000.0, 5))}))
    after = parse_metrics(vllm_text({"0": EngineValues(replies=(8000.0, 8))}))
    assert derive_load(before, after, 1.25, 1.0).reply_tokens == 1000.0
    assert derive_load(after, after, 1.5, 1.25).reply_tokens is None  # none finished
    older = parse_metrics(vllm_text({"0": EngineValues()}))  # a build without the histogram
    assert derive_load(older, older, 1.5, 1.25).reply_tokens is None
