"""SimConfig: every knob of the simulated vLLM server (model identity, KV cache, speed, output).

The defaults describe a small GPU model (an 8B model on one mid-range card): tens of
milliseconds to the first token when idle, 10-20 ms per token, answers of 16-64 tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SimConfig:
    # Identity, as /v1/models and the metrics' model_name label report it.
    model_name: str = "sim-llama-8b"
    model_root: str | None = None  # /v1/models `root`; real vLLM shows the weights path
    owned_by: str = "gateway-sim"
    # Which server it plays: "vllm" (OpenAI endpoints plus vLLM's /metrics, /tokenize...),
    # "openai" (a commercial API: the OpenAI endpoints only) or "anthropic" (the Messages API).
    api: Literal["vllm", "openai", "anthropic"] = "vllm"
    # A fixed wait before the engine sees a request: a commercial API's network and queueing,
    # which put its time to first token in the hundreds of milliseconds.
    response_delay_s: float = 0.0
    max_model_len: int = 8192
    # When prompt + max_tokens overruns max_model_len: "cap" cuts max_tokens to the room left,
    # as vLLM 0.32 does (measured); "reject" answers 400 "This model's maximum context length
    # is N tokens. However, you requested ..." as older vLLM releases did.
    context_overflow: Literal["cap", "reject"] = "cap"

    # KV cache: num_gpu_blocks × block_size tokens; prefix caching reuses full blocks.
    block_size: int = 16
    num_gpu_blocks: int = 2048
    enable_prefix_caching: bool = True
    # Llama-3-8B: 2 (K, V) × 32 layers × 8 KV heads × 128 head_dim × 2 bytes.
    kv_bytes_per_token: int = 131072

    # Scheduler: continuous batching up to max_num_seqs; one step admits at most
    # max_num_batched_tokens of prefill (a single longer prompt is still admitted alone).
    max_num_seqs: int = 16
    max_num_batched_tokens: int = 8192

    # Speed: a step takes decode_step_base_s + decode_step_per_seq_s × batch + prefill tokens /
    # prefill_tokens_per_s. Every sleep is multiplied by time_scale (tests use small values;
    # 0 runs steps back to back).
    prefill_tokens_per_s: float = 8000.0
    decode_step_base_s: float = 0.010
    decode_step_per_seq_s: float = 0.0006
    time_scale: float = 1.0

    # Output: an answer ends on its own after a length drawn in [min, max] (finish "stop")
    # unless max_tokens cuts it first ("length"). Without max_tokens the cap is
    # min(default_max_tokens, room left in the context).
    default_max_tokens: int = 256
    output_tokens_min: int = 16
    output_tokens_max: int = 64
    embedding_dim: int = 64
    vocab_size: int = 128256
    seed: int = 0
    # Answer quality (quality.py): chat answers start with a `[sim-quality q]` mark whose q
    # depends on the prompt and this tier. None: plain filler, as before.
    quality_tier: int | None = None
    # A judge (judge.py): a chat request holding a rubric's two answers is answered with
    # their scores as JSON instead of filler.
    judge: bool = False

    def __post_init__(self) -> None:
        positive = {
            "max_model_len": self.max_model_len,
            "block_size": self.block_size,
            "num_gpu_blocks": self.num_gpu_blocks,
            "max_num_seqs": self.max_num_seqs,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "prefill_tokens_per_s": self.prefill_tokens_per_s,
            "default_max_tokens": self.default_max_tokens,
            "output_tokens_min": self.output_tokens_min,
            "embedding_dim": self.embedding_dim,
            "kv_bytes_per_token": self.kv_bytes_per_token,
        }
        for name, value in positive.items():
            if value <= 0:
                raise ValueError(f"SimConfig.{name} must be > 0, got {value}")
        if self.vocab_size < 1024:
            raise ValueError("SimConfig.vocab_size must be >= 1024")
        if self.api not in ("vllm", "openai", "anthropic"):
            raise ValueError("SimConfig.api must be 'vllm', 'openai' or 'anthropic'")
        if min(self.decode_step_base_s, self.decode_step_per_seq_s, self.time_scale,
               self.response_delay_s) < 0:
            raise ValueError("SimConfig step times and time_scale must be >= 0")
        if self.context_overflow not in ("cap", "reject"):
            raise ValueError("SimConfig.context_overflow must be 'cap' or 'reject'")
        if self.quality_tier is not None and self.quality_tier < 0:
            raise ValueError("SimConfig.quality_tier must be >= 0")
        if self.output_tokens_max < self.output_tokens_min:
            raise ValueError("SimConfig.output_tokens_max must be >= output_tokens_min")
        # Real vLLM refuses to start when one max-length request cannot fit in the KV cache;
        # the sim does the same, which also guarantees the scheduler can never deadlock.
        if self.max_model_len > self.kv_cache_size_tokens:
            raise ValueError(
                f"max_model_len ({self.max_model_len}) exceeds the KV cache "
                f"({self.num_gpu_blocks} blocks × {self.block_size} = "
                f"{self.kv_cache_size_tokens} tokens)"
            )

    @property
    def kv_cache_size_tokens(self) -> int:
        return self.num_gpu_blocks * self.block_size

    @property
    def kv_cache_memory_bytes(self) -> int:
        return self.kv_cache_size_tokens * self.kv_bytes_per_token

    @property
    def root(self) -> str:
        return self.model_root or self.model_name
