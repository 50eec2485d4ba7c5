"""The one table of engine metric names: every load signal the router reads, under the exposed
Prometheus sample names of vLLM, SGLang and llama.cpp, with the aliases older versions used."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Engine(StrEnum):
    VLLM = "vllm"
    SGLANG = "sglang"
    LLAMACPP = "llamacpp"


class Signal(StrEnum):
    RUNNING = "running"
    WAITING = "waiting"
    KV_USAGE = "kv_usage"  # fraction 0..1
    KV_CAPACITY_TOKENS = "kv_capacity_tokens"
    PREFIX_HIT_RATE = "prefix_hit_rate"  # a gauge; used only where the counters are missing
    PREFIX_HITS = "prefix_hits"  # tokens
    PREFIX_QUERIES = "prefix_queries"  # tokens
    PROMPT_TOKENS = "prompt_tokens"
    GENERATION_TOKENS = "generation_tokens"
    PREEMPTIONS = "preemptions"
    REQUESTS_FINISHED = "requests_finished"
    TTFT = "ttft"
    ITL = "itl"
    REPLY_TOKENS = "reply_tokens"  # tokens generated per finished request (a histogram)


@dataclass(frozen=True, slots=True)
class Dialect:
    """One engine's names. Each signal maps to aliases, newest first: the first present wins."""

    engine: Engine
    prefix: str
    gauges: Mapping[Signal, tuple[str, ...]]
    # Exposed sample names, `_total` included: prometheus_client strips it from the *family*
    # name of a counter but never from its samples, so samples are the stable key.
    counters: Mapping[Signal, tuple[str, ...]]
    # Base names; the `_sum` and `_count` samples are read, the buckets are not.
    histograms: Mapping[Signal, tuple[str, ...]]
    # Info gauges (value 1) whose labels describe the KV cache.
    cache_info: tuple[str, ...] = ()
    # Labels that tell data-parallel replicas apart: their gauges add up, while series that
    # differ only in other labels (TP/PP ranks reporting the same scheduler) are one replica.
    replica_labels: tuple[str, ...] = ()
    # llama.cpp counts cached prompt tokens apart from computed ones; the others include them.
    prompt_tokens_exclude_cached: bool = False


# vllm:cache_config_info labels (all strings; "None" when unset).
BLOCK_SIZE_LABEL = "block_size"
NUM_BLOCKS_LABEL = "num_gpu_blocks"  # "gpu" on CPU builds too
CACHE_TOKENS_LABEL = "kv_cache_size_tokens"
CACHE_BYTES_LABEL = "kv_cache_memory_bytes"

VLLM = Dialect(
    engine=Engine.VLLM,
    prefix="vllm:",
    gauges={
        Signal.RUNNING: ("vllm:num_requests_running",),
        Signal.WAITING: ("vllm:num_requests_waiting",),
        # Renamed in 0.9; the old name was hidden in 0.10 and is gone from current builds.
        Signal.KV_USAGE: ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        Signal.PREFIX_HIT_RATE: ("vllm:gpu_prefix_cache_hit_rate",),  # V0 only
    },
    counters={
        Signal.PREFIX_HITS: ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
        Signal.PREFIX_QUERIES: (
            "vllm:prefix_cache_queries_total",
            "vllm:gpu_prefix_cache_queries_total",
        ),
        Signal.PROMPT_TOKENS: ("vllm:prompt_tokens_total",),
        Signal.GENERATION_TOKENS: ("vllm:generation_tokens_total",),
        Signal.PREEMPTIONS: ("vllm:num_preemptions_total",),
        Signal.REQUESTS_FINISHED: ("vllm:request_success_total",),  # summed over finished_reason
    },
    histograms={
        Signal.TTFT: ("vllm:time_to_first_token_seconds",),
        # Deprecated in 0.11, hidden in 0.12.
        Signal.ITL: ("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
        # Observed once per finished request: the exact mean reply length over an interval.
        Signal.REPLY_TOKENS: ("vllm:request_generation_tokens",),
    },
    cache_info=("vllm:cache_config_info",),
    replica_labels=("engine",),
)

SGLANG = Dialect(
    engine=Engine.SGLANG,
    prefix="sglang:",
    gauges={
        Signal.RUNNING: ("sglang:num_running_reqs",),
        Signal.WAITING: ("sglang:num_queue_reqs",),
        Signal.KV_USAGE: ("sglang:token_usage",),
        Signal.KV_CAPACITY_TOKENS: ("sglang:max_total_num_tokens",),
        Signal.PREFIX_HIT_RATE: ("sglang:cache_hit_rate",),
    },
    counters={
        Signal.PREFIX_HITS: ("sglang:cached_tokens_total",),
        # SGLang's prompt tokens include the cached ones, so they are the prefix queries.
        Signal.PREFIX_QUERIES: ("sglang:prompt_tokens_total",),
        Signal.PROMPT_TOKENS: ("sglang:prompt_tokens_total",),
        Signal.GENERATION_TOKENS: ("sglang:generation_tokens_total",),
        # The counter; `sglang:num_retracted_reqs` is a gauge of the last step and has no rate.
        Signal.PREEMPTIONS: ("sglang:num_retracted_requests_total",),
        Signal.REQUESTS_FINISHED: ("sglang:num_requests_total",),
    },
    histograms={
        Signal.TTFT: ("sglang:time_to_first_token_seconds",),
        # `_sum` adds whole intervals and `_count` their tokens, so sum/count is per token.
        Signal.ITL: ("sglang:inter_token_latency_seconds", "sglang:time_per_output_token_seconds"),
    },
    replica_labels=("dp_rank",),
)

LLAMACPP = Dialect(
    engine=Engine.LLAMACPP,
    prefix="llamacpp:",
    gauges={
        Signal.RUNNING: ("llamacpp:requests_processing",),
        Signal.WAITING: ("llamacpp:requests_deferred",),
        Signal.KV_USAGE: ("llamacpp:kv_cache_usage_ratio",),  # older builds only
    },
    counters={
        Signal.PREFIX_HITS: ("llamacpp:prompt_tokens_cached_total",),
        Signal.PROMPT_TOKENS: ("llamacpp:prompt_tokens_total",),
        Signal.GENERATION_TOKENS: ("llamacpp:tokens_predicted_total",),
    },
    histograms={},
    prompt_tokens_exclude_cached=True,
)

DIALECTS: tuple[Dialect, ...] = (VLLM, SGLANG, LLAMACPP)


def sample_names(dialect: Dialect) -> frozenset[str]:
    """Every exposed sample name the dialect reads (histograms as their `_sum` and `_count`)."""
    names = {name for aliases in dialect.gauges.values() for name in aliases}
    names.update(name for aliases in dialect.counters.values() for name in aliases)
    for aliases in dialect.histograms.values():
        for base in aliases:
            names.update((f"{base}_sum", f"{base}_count"))
    names.update(dialect.cache_info)
    return frozenset(names)
