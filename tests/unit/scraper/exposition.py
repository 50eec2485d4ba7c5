"""Builds vLLM-style /metrics text from chosen values, for tests that need many variations
(derive_load over two scrapes, property tests); the fixtures/ files hold the fixed pages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


@dataclass(frozen=True)
class EngineValues:
    """One vLLM engine (data-parallel rank); None leaves the series out of the page."""

    running: float | None = 0
    waiting: float | None = 0
    kv_usage: float | None = 0.0
    prompt_tokens: float | None = 0
    generation_tokens: float | None = 0
    prefix_queries: float | None = 0
    prefix_hits: float | None = 0
    preemptions: float | None = 0
    finished: Mapping[str, float] | None = field(default_factory=lambda: {"stop": 0, "length": 0})
    ttft: tuple[float, float] | None = (0.0, 0)  # (sum, count)
    itl: tuple[float, float] | None = (0.0, 0)
    replies: tuple[float, float] | None = None  # vllm:request_generation_tokens (sum, count)
    num_gpu_blocks: int | None = 128
    block_size: int = 32
    kv_bytes_per_token: int | None = 1024


def _family(lines: list[str], name: str, kind: str, series: list[tuple[str, float]]) -> None:
    lines.append(f"# HELP {name} test series")
    lines.append(f"# TYPE {name} {kind}")
    lines.extend(f"{name}{{{labels}}} {float(value)!r}" for labels, value in series)


def vllm_text(engines: Mapping[str, EngineValues], model: str = "m") -> str:
    lines = ["# HELP process_open_fds Number of open file descriptors.",
             "# TYPE process_open_fds gauge", "process_open_fds 42.0"]  # fmt: skip

    def each(attr: str) -> list[tuple[str, float]]:
        return [
            (f'engine="{e}",model_name="{model}"', getattr(v, attr))
            for e, v in engines.items()
            if getattr(v, attr) is not None
        ]

    _family(lines, "vllm:num_requests_running", "gauge", each("running"))
    _family(lines, "vllm:num_requests_waiting", "gauge", each("waiting"))
    _family(lines, "vllm:kv_cache_usage_perc", "gauge", each("kv_usage"))
    for attr, name in (
        ("prompt_tokens", "vllm:prompt_tokens_total"),
        ("generation_tokens", "vllm:generation_tokens_total"),
        ("prefix_queries", "vllm:prefix_cache_queries_total"),
        ("prefix_hits", "vllm:prefix_cache_hits_total"),
        ("preemptions", "vllm:num_preemptions_total"),
    ):
        _family(lines, name, "counter", each(attr))
    _family(lines, "vllm:request_success_total", "counter", [
        (f'engine="{e}",finished_reason="{reason}",model_name="{model}"', count)
        for e, v in engines.items() if v.finished is not None
        for reason, count in v.finished.items()
    ])  # fmt: skip
    for attr, name in (
        ("ttft", "vllm:time_to_first_token_seconds"),
        ("itl", "vllm:inter_token_latency_seconds"),
        ("replies", "vllm:request_generation_tokens"),
    ):
        lines.append(f"# TYPE {name} histogram")
        for e, v in engines.items():
            totals = getattr(v, attr)
            if totals is not None:
                labels = f'engine="{e}",model_name="{model}"'
                lines.append(f'{name}_bucket{{engine="{e}",le="+Inf",model_name="{model}"}} '
                             f"{float(totals[1])!r}")  # fmt: skip
                lines.append(f"{name}_count{{{labels}}} {float(totals[1])!r}")
                lines.append(f"{name}_sum{{{labels}}} {float(totals[0])!r}")
    info = []
    for e, v in engines.items():
        if v.num_gpu_blocks is None:
            continue
        tokens = v.num_gpu_blocks * v.block_size
        size = "None" if v.kv_bytes_per_token is None else str(tokens * v.kv_bytes_per_token)
        info.append((
            f'block_size="{v.block_size}",enable_prefix_caching="True",engine="{e}",'
            f'kv_cache_memory_bytes="{size}",kv_cache_size_tokens="{tokens}",'
            f'num_cpu_blocks="None",num_gpu_blocks="{v.num_gpu_blocks}"',
            1.0,
        ))  # fmt: skip
    _family(lines, "vllm:cache_config_info", "gauge", info)
    return "\n".join(lines) + "\n"
