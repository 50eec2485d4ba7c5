"""The sizing arithmetic of `gateway plan`, from explicit inputs. Pure; bytes throughout.

Memory: weights = parameters × bytes per weight; KV per token = 2 (K and V) × layers × KV
heads × head dim × bytes per KV element (a compressed latent cache, as DeepSeek's MLA, stores
`kv_latent_dim` elements per layer instead); KV per session = (prompt + output tokens, capped
by the context, less the prompt share a prefix cache serves) × KV per token; total memory =
(weights + sessions × KV per session) × (1 + overhead); GPUs for memory = ⌈total ÷ GPU
memory⌉. With a tensor-parallel size the fleet is replicas of that many GPUs, each holding the
weights once: replicas = ⌈KV total ÷ (TP × GPU memory ÷ (1 + overhead) − weights)⌉.
Throughput: tokens/s needed = peak QPS × output tokens; GPUs for it = ⌈needed ÷ tokens/s per
GPU⌉. GPUs = the larger (a whole number of replicas); monthly cost = GPUs × 730 h × $/GPU-h.
Tokens/s per GPU is given, or, when the GPU's memory bandwidth is known, estimated as what a
full batch decodes: decoding is memory-bound, so each step reads the weights and every
session's KV once; a replica holds as many sessions as its KV headroom fits, and its rate is
sessions ÷ (bytes read per step ÷ achieved bandwidth). That is capacity, not the demand a
quiet deployment happened to see.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

HOURS_PER_MONTH = 730
GB = 10**9  # GPU memory is stated in 10^9 bytes, as vendors state it
# An assumption, stated: decode kernels reach well under a GPU's peak memory bandwidth
# (published vLLM and TensorRT-LLM measurements sit around half to three quarters of it).
ACHIEVED_BANDWIDTH_SHARE = 0.6
MAX_BATCH = 256  # vLLM's default max_num_seqs: a replica never runs more sessions at once


class SizingError(ValueError):
    """Inputs that cannot be sized (a model that does not fit, nothing to size)."""


@dataclass(frozen=True, slots=True)
class ModelShape:
    params_b: float  # billions of parameters
    layers: int
    kv_heads: int
    head_dim: int
    weight_bytes: float = 2.0
    kv_bytes: float = 2.0
    kv_latent_dim: int | None = None  # MLA: elements cached per layer and token (K and V in one)
    context_window: int | None = None
    kv_bytes_per_token: int | None = None  # as measured or declared (a policy's `kv:` block)


@dataclass(frozen=True, slots=True)
class Workload:
    prompt_tokens: int
    output_tokens: int
    sessions: float | None = None  # concurrent sessions, given directly
    users: float | None = None
    concurrency: float | None = None  # share of users with a request in flight at the peak
    peak_qps: float = 0.0
    context_cap: int | None = None  # what-if: tokens per session at most
    prefix_hit_rate: float = 0.0  # what-if: share of prompt tokens a prefix cache shares


@dataclass(frozen=True, slots=True)
class Hardware:
    gpu_memory_gb: float
    gpu_hourly_usd: float = 0.0
    tokens_per_s_per_gpu: float | None = None
    overhead: float = 0.1  # activations, CUDA graphs, fragmentation: a share of the rest
    tensor_parallel: int | None = None
    bandwidth_gb_s: float | None = None  # memory bandwidth: what bounds decode speed


@dataclass(frozen=True, slots=True)
class SizingPlan:
    weights_bytes: int
    kv_bytes_per_token: int
    kv_bytes_per_session: int
    concurrent_sessions: int
    kv_bytes_total: int
    vram_bytes_total: int
    gpus_for_memory: int
    gpus_for_throughput: int
    gpus: int
    monthly_usd: float
    tokens_per_s_needed: float
    tensor_parallel: int | None
    weights_bytes_per_gpu: int
    kv_headroom_bytes_per_gpu: int  # what a GPU has left for KV after its weights
    tokens_per_s_per_gpu: float | None = None  # given or estimated; None: throughput unsized
    throughput_basis: str = "given"  # "given" | "memory bandwidth" | "not sized"

    def as_json(self) -> dict[str, float | int | None]:
        return asdict(self)


def dollars(value: float) -> str:
    """A monthly figure for people: cents, thousands grouped, the sign before the dollar
    sign (-$0.91, never $-0.91)."""
    return f"{'-' if value < 0 else ''}${abs(value):,.2f}"


def _ceil(x: float) -> int:
    """⌈x⌉, forgiving the float dust of a quotient that is whole on paper (4.5 / 1.5)."""
    return math.ceil(x * (1 - 1e-12))


def kv_bytes_per_token(model: ModelShape) -> int:
    if model.kv_bytes_per_token is not None:
        return model.kv_bytes_per_token
    if model.kv_latent_dim is not None:
        return math.ceil(model.layers * model.kv_latent_dim * model.kv_bytes)
    return math.ceil(2 * model.layers * model.kv_heads * model.head_dim * model.kv_bytes)


def session_tokens(model: ModelShape, work: Workload) -> float:
    tokens = work.prompt_tokens + work.output_tokens
    cap = min(c for c in (work.context_cap, model.context_window, tokens) if c is not None)
    prompt = min(work.prompt_tokens, cap)
    return prompt * (1 - work.prefix_hit_rate) + (cap - prompt)


def concurrent_sessions(work: Workload) -> int:
    if work.sessions is not None:
        return math.ceil(work.sessions)
    if work.users is None or work.concurrency is None:
        raise SizingError("give --sessions, or --users with --concurrency")
    return _ceil(work.users * work.concurrency)


def decode_tokens_per_s_per_gpu(model: ModelShape, work: Workload,
                                hw: Hardware) -> float | None:
    """What one GPU decodes with its replica's batch full (the memory-bandwidth bound, at the
    achieved share); None when the bandwidth is unknown or a session does not fit."""
    if not hw.bandwidth_gb_s:
        return None
    weights = model.params_b * GB * model.weight_bytes
    per_token = kv_bytes_per_token(model)
    usable = hw.gpu_memory_gb * GB / (1 + hw.overhead)
    replica = hw.tensor_parallel or max(1, _ceil(weights / usable))
    room = replica * usable - weights
    per_session = session_tokens(model, work) * per_token
    if room <= 0 or room < per_session:
        return None
    batch = min(MAX_BATCH, math.floor(room / per_session) if per_session else MAX_BATCH)
    # On average a session is half-way through its output: that much KV is read per step.
    read = (work.prompt_tokens * (1 - work.prefix_hit_rate) + work.output_tokens / 2) \
        * per_token
    step_s = (weights + batch * read) / (replica * hw.bandwidth_gb_s * GB
                                         * ACHIEVED_BANDWIDTH_SHARE)
    return batch / step_s / replica


def size(model: ModelShape, work: Workload, hw: Hardware) -> SizingPlan:
    weights = math.ceil(model.params_b * GB * model.weight_bytes)
    per_token = kv_bytes_per_token(model)
    per_session = math.ceil(session_tokens(model, work) * per_token)
    sessions = concurrent_sessions(work)
    kv_total = sessions * per_session
    vram = round((weights + kv_total) * (1 + hw.overhead))  # to the byte: no float dust
    gpu_bytes = hw.gpu_memory_gb * GB
    tp = hw.tensor_parallel
    usable = gpu_bytes / (1 + hw.overhead)
    if tp is None:
        for_memory = _ceil(vram / gpu_bytes)
        per_gpu_weights = weights / max(for_memory, 1)
    else:
        room = tp * usable - weights
        if room <= 0:
            raise SizingError(
                f"the weights ({weights / GB:.1f} GB) do not fit on {tp} GPU(s) of "
                f"{hw.gpu_memory_gb:g} GB with {hw.overhead:.0%} overhead: raise the "
                "tensor-parallel size or quantise the weights")
        for_memory = tp * max(1, _ceil(kv_total / room))
        per_gpu_weights = weights / tp
    needed = work.peak_qps * work.output_tokens
    for_throughput = 0
    rate, basis = hw.tokens_per_s_per_gpu, "given"
    if not rate:
        rate, basis = decode_tokens_per_s_per_gpu(model, work, hw), "memory bandwidth"
    if rate is None:
        basis = "not sized"
    if needed > 0:
        if not rate:
            raise SizingError("give --tokens-per-s-per-gpu (or a --gpu whose memory bandwidth "
                              "the catalogue knows) to size for --peak-qps")
        for_throughput = _ceil(needed / rate)
        if tp is not None:  # whole replicas
            for_throughput = tp * math.ceil(for_throughput / tp)
    gpus = max(for_memory, for_throughput)
    return SizingPlan(
        weights_bytes=weights,
        kv_bytes_per_token=per_token,
        kv_bytes_per_session=per_session,
        concurrent_sessions=sessions,
        kv_bytes_total=kv_total,
        vram_bytes_total=vram,
        gpus_for_memory=for_memory,
        gpus_for_throughput=for_throughput,
        gpus=gpus,
        monthly_usd=round(gpus * HOURS_PER_MONTH * hw.gpu_hourly_usd, 2),
        tokens_per_s_needed=needed,
        tensor_parallel=tp,
        weights_bytes_per_gpu=math.ceil(per_gpu_weights),
        kv_headroom_bytes_per_gpu=math.floor(usable - per_gpu_weights),
        tokens_per_s_per_gpu=rate,
        throughput_basis=basis,
    )


WHAT_IFS: dict[str, dict[str, float]] = {
    "as given": {},
    "FP8 weights": {"weight_bytes": 1.0},
    "INT4 weights": {"weight_bytes": 0.5},
    "FP8 KV cache": {"kv_bytes": 1.0},
    "FP8 weights + KV": {"weight_bytes": 1.0, "kv_bytes": 1.0},
}


def what_ifs(model: ModelShape, work: Workload,
             hw: Hardware) -> list[tuple[str, SizingPlan | str]]:
    """The plan again under each common quantisation; a variant that cannot be sized says
    why instead."""
    found: list[tuple[str, SizingPlan | str]] = []
    for name, change in WHAT_IFS.items():
        try:
            found.append((name, size(replace(model, **change), work, hw)))
        except SizingError as exc:
            found.append((name, str(exc)))
    return found
