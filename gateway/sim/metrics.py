"""SimMetrics: the engine's Prometheus series under vLLM 0.32's exact names, labels and buckets.

One CollectorRegistry per app (two sims can share a process). Counters are created without
the `_total` suffix, which prometheus_client appends on exposition, as vLLM does.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from gateway.sim.config import SimConfig

# Bucket boundaries copied from a real vLLM 0.32 /metrics dump.
TTFT_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
    10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
ITL_BUCKETS_S = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0,
)  # fmt: skip
REQUEST_LATENCY_BUCKETS_S = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
    240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
ITERATION_TOKEN_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")
METRICS_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4


def buckets_1_2_5(limit: int) -> list[float]:
    """1, 2, 5, 10, 20, 50, ... up to limit: vLLM's token-count buckets for max_model_len."""
    buckets: list[float] = []
    magnitude = 1
    while True:
        for mantissa in (1, 2, 5):
            value = mantissa * magnitude
            if value > limit:
                return buckets
            buckets.append(float(value))
        magnitude *= 10


def cache_config_labels(config: SimConfig) -> dict[str, str]:
    """The labels of vllm:cache_config_info that a router reads (the rest are engine trivia)."""
    return {
        "block_size": str(config.block_size),
        "cache_dtype": "auto",
        "enable_prefix_caching": str(config.enable_prefix_caching),
        "engine": "0",
        "gpu_memory_utilization": "0.92",
        "kv_cache_max_concurrency": str(config.kv_cache_size_tokens / config.max_model_len),
        "kv_cache_memory_bytes": str(config.kv_cache_memory_bytes),
        "kv_cache_size_tokens": str(config.kv_cache_size_tokens),
        "num_cpu_blocks": "None",
        "num_gpu_blocks": str(config.num_gpu_blocks),
        "prefix_caching_hash_algo": "sha256",
        "sliding_window": "None",
    }


class SimMetrics:
    def __init__(self, config: SimConfig) -> None:
        self.registry = CollectorRegistry()
        labels = {"engine": "0", "model_name": config.model_name}
        names = ["engine", "model_name"]
        reg = self.registry

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, names, registry=reg)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, names, registry=reg).labels(**labels)

        def histogram(name: str, doc: str, buckets: tuple[float, ...] | list[float]) -> Histogram:
            return Histogram(name, doc, names, buckets=buckets, registry=reg).labels(**labels)

        self._running = gauge(
            "vllm:num_requests_running", "Number of requests in model execution batches."
        )
        self._waiting = gauge(
            "vllm:num_requests_waiting", "Number of requests waiting to be processed."
        )
        self._waiting_by_reason = Gauge(
            "vllm:num_requests_waiting_by_reason",
            "Number of waiting requests by reason.",
            [*names, "reason"],
            registry=reg,
        )
        self._kv_usage = gauge(
            "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."
        )
        info = cache_config_labels(config)
        Gauge(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            sorted(info),
            registry=reg,
        ).labels(**info).set(1)

        self.prefix_queries = counter(
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
        )
        self.prefix_hits = counter(
            "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens."
        )
        self.preemptions = counter(
            "vllm:num_preemptions", "Cumulative number of preemption from the engine."
        )
        self.prompt_tokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.prompt_tokens_cached = counter(
            "vllm:prompt_tokens_cached", "Number of cached prompt tokens (local + external)."
        )
        self.generation_tokens = counter(
            "vllm:generation_tokens", "Number of generation tokens processed."
        )
        success = Counter(
            "vllm:request_success",
            "Count of successfully processed requests.",
            ["engine", "finished_reason", "model_name"],
            registry=reg,
        )
        self._success = {r: success.labels(finished_reason=r, **labels) for r in FINISHED_REASONS}

        token_buckets = buckets_1_2_5(config.max_model_len)
        self.request_prompt_tokens = histogram(
            "vllm:request_prompt_tokens", "Number of prefill tokens processed.", token_buckets
        )
        self.request_generation_tokens = histogram(
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            token_buckets,
        )
        self.request_max_tokens = histogram(
            "vllm:request_params_max_tokens",
            "Histogram of the max_tokens request parameter.",
            token_buckets,
        )
        self.iteration_tokens = histogram(
            "vllm:iteration_tokens_total",
            "Histogram of number of tokens per engine_step.",
            ITERATION_TOKEN_BUCKETS,
        )
        self.ttft = histogram(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            TTFT_BUCKETS_S,
        )
        self.itl = histogram(
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            ITL_BUCKETS_S,
        )
        self.tpot = histogram(
            "vllm:request_time_per_output_token_seconds",
            "Histogram of time_per_output_token_seconds per request.",
            ITL_BUCKETS_S,
        )
        self.e2e = histogram(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.queue_time = histogram(
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.inference_time = histogram(
            "vllm:request_inference_time_seconds",
            "Histogram of time spent in RUNNING phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.prefill_time = histogram(
            "vllm:request_prefill_time_seconds",
            "Histogram of time spent in PREFILL phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self.decode_time = histogram(
            "vllm:request_decode_time_seconds",
            "Histogram of time spent in DECODE phase for request.",
            REQUEST_LATENCY_BUCKETS_S,
        )
        self._labels = labels

    def bind_load(
        self,
        running: Callable[[], float],
        waiting: Callable[[], float],
        kv_usage: Callable[[], float],
    ) -> None:
        """Read the load gauges from the live engine at scrape time (never stale)."""
        labels = self._labels
        self._running.labels(**labels).set_function(running)
        self._waiting.labels(**labels).set_function(waiting)
        self._waiting_by_reason.labels(reason="capacity", **labels).set_function(waiting)
        self._waiting_by_reason.labels(reason="deferred", **labels).set(0)
        self._kv_usage.labels(**labels).set_function(kv_usage)

    def count_finished(self, reason: str) -> None:
        self._success[reason if reason in self._success else "error"].inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
