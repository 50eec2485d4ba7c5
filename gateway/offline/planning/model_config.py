"""A Hugging Face config.json → ModelShape: layers, KV heads, head dim, dtype, the MLA latent
when there is one, and the parameter count estimated from the matrices a Llama-, Qwen- or
Mixtral-style decoder has (None when the architecture is beyond that estimate)."""

from __future__ import annotations

from typing import Any

from gateway.capacity.sizing import ModelShape

DTYPE_BYTES = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0, "float8_e4m3fn": 1.0,
               "fp8": 1.0, "int8": 1.0, "int4": 0.5}


class ConfigError(ValueError):
    """A config.json without what sizing needs."""


def _int(config: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = config.get(name)
        if isinstance(value, int) and value > 0:
            return value
    return None


def estimated_params_b(config: dict[str, Any]) -> float | None:
    hidden = _int(config, "hidden_size")
    layers = _int(config, "num_hidden_layers")
    heads = _int(config, "num_attention_heads")
    inter = _int(config, "intermediate_size")
    vocab = _int(config, "vocab_size")
    if None in (hidden, layers, heads, inter, vocab) or "kv_lora_rank" in config:
        return None
    assert hidden and layers and heads and inter and vocab
    kv_heads = _int(config, "num_key_value_heads") or heads
    head_dim = _int(config, "head_dim") or hidden // heads
    attention = hidden * head_dim * (2 * heads + 2 * kv_heads)  # q, o; k, v
    experts = _int(config, "num_local_experts") or 1
    mlp = 3 * hidden * inter * experts + (hidden * experts if experts > 1 else 0)
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    return (layers * (attention + mlp) + embeddings) / 1e9


def shape_from_config(config: dict[str, Any], params_b: float | None = None) -> ModelShape:
    layers = _int(config, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(config, "num_attention_heads", "n_head")
    hidden = _int(config, "hidden_size", "n_embd")
    if layers is None or heads is None:
        raise ConfigError("config.json needs num_hidden_layers and num_attention_heads")
    kv_heads = _int(config, "num_key_value_heads") or heads
    head_dim = _int(config, "head_dim") or (hidden // heads if hidden else None)
    if head_dim is None:
        raise ConfigError("config.json needs head_dim or hidden_size")
    dtype = str(config.get("torch_dtype") or "bfloat16")
    weight_bytes = DTYPE_BYTES.get(dtype, 2.0)
    quant = config.get("quantization_config") or {}
    if isinstance(quant, dict) and str(quant.get("quant_method", "")).lower() == "fp8":
        weight_bytes = 1.0
    latent = None
    rank = _int(config, "kv_lora_rank")
    if rank is not None:  # MLA: the compressed latent and the decoupled rotary part
        latent = rank + (_int(config, "qk_rope_head_dim") or 0)
    params = params_b if params_b is not None else estimated_params_b(config)
    if params is None:
        raise ConfigError("cannot estimate this architecture's parameters: give --params-b")
    return ModelShape(params, layers, kv_heads, head_dim, weight_bytes=weight_bytes,
                      # Engines serve float32 checkpoints in 16 bits: so is their cache.
                      kv_bytes=min(DTYPE_BYTES.get(dtype, 2.0), 2.0),
                      kv_latent_dim=latent,
                      context_window=_int(config, "max_position_embeddings"))
