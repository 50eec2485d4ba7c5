"""The shapes of common open models and the GPUs they run on, for `gateway plan --model` and
`--gpu`. Shapes are from each model's published config.json; GPU memory is in 10^9 bytes as
vendors state it; prices are indicative on-demand cloud list prices per GPU-hour (late 2026),
there to be overridden with --gpu-hourly-usd."""

from __future__ import annotations

from dataclasses import dataclass

from gateway.capacity.sizing import ModelShape


@dataclass(frozen=True, slots=True)
class GpuModel:
    memory_gb: float
    bandwidth_gb_s: float  # HBM/GDDR bandwidth: what bounds decode speed
    hourly_usd: float  # indicative list price, one GPU


MODELS: dict[str, ModelShape] = {
    "llama-3.1-8b": ModelShape(8.03, 32, 8, 128, context_window=131_072),
    "llama-3.1-70b": ModelShape(70.6, 80, 8, 128, context_window=131_072),
    "llama-3.1-405b": ModelShape(405.9, 126, 8, 128, context_window=131_072),
    "qwen2.5-7b": ModelShape(7.62, 28, 4, 128, context_window=131_072),
    "qwen2.5-32b": ModelShape(32.5, 64, 8, 128, context_window=131_072),
    "qwen2.5-72b": ModelShape(72.7, 80, 8, 128, context_window=131_072),
    "qwen3-32b": ModelShape(32.8, 64, 8, 128, context_window=131_072),
    "mistral-7b": ModelShape(7.25, 32, 8, 128, context_window=32_768),
    "mixtral-8x7b": ModelShape(46.7, 32, 8, 128, context_window=32_768),
    "mixtral-8x22b": ModelShape(141.0, 56, 8, 128, context_window=65_536),
    # MLA caches one compressed latent per layer and token: kv_lora_rank 512 + the 64 rotary
    # dims, not K and V per head. Released in FP8.
    "deepseek-v3": ModelShape(671.0, 61, 128, 128, weight_bytes=1.0, kv_latent_dim=576,
                              context_window=131_072),
}

GPUS: dict[str, GpuModel] = {
    "L4": GpuModel(24, 300, 0.80),
    "A10G": GpuModel(24, 600, 1.01),
    "L40S": GpuModel(48, 864, 1.90),
    "A100-40GB": GpuModel(40, 1555, 3.00),
    "A100-80GB": GpuModel(80, 2039, 3.70),
    "H100": GpuModel(80, 3350, 4.50),
    "H200": GpuModel(141, 4800, 5.50),
    "B200": GpuModel(180, 8000, 8.00),
    "MI300X": GpuModel(192, 5300, 4.00),
}


def find(table: dict[str, object], name: str, what: str) -> str:
    """The catalogue's own spelling of `name` (case-insensitive), or a list of choices."""
    for key in table:
        if key.lower() == name.strip().lower():
            return key
    raise KeyError(f"no {what} named {name!r}; known: {', '.join(table)}")


def model_for(upstream_model: str) -> str | None:
    """The catalogue model an upstream name is ("meta-llama/Llama-3.1-8B-Instruct" →
    llama-3.1-8b), when one name is unmistakably in it."""
    name = upstream_model.lower().replace("_", "-")
    hits = [key for key in MODELS if key in name or key.replace("-", "") in name]
    return max(hits, key=len) if hits else None
