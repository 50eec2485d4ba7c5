"""Sizing each self-hosted deployment a policy pays GPUs for, from its observed load: the
model's shape from the flags, the catalogue (matched on the upstream model name) or the
policy's `kv:` block, and its GPUs from the flags or the policy's `gpu:` block. Shared by
`gateway plan --from-audit`, the report page and `policy replay`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gateway.capacity.audit_plan import DeploymentPlan, plan_deployment
from gateway.capacity.catalogue import GPUS, MODELS, find, model_for
from gateway.capacity.observed import ObservedLoad
from gateway.capacity.sizing import Hardware, ModelShape, SizingError
from gateway.policy.loader import PolicySet

MODEL_FLAGS = ("params_b", "layers", "kv_heads", "head_dim", "weight_bytes", "kv_bytes")
# What a plan assumes when no flag says otherwise (the page and policy replay size with these).
DEFAULTS: dict[str, Any] = dict.fromkeys(
    (*MODEL_FLAGS, "gpu", "gpu_memory_gb", "gpu_hourly_usd", "tokens_per_s_per_gpu",
     "tensor_parallel")) | {"overhead": 0.1, "headroom": 0.2}


def shape_for(options: dict[str, Any], base: ModelShape | None, upstream: str,
              kv_bytes_per_token: float | None) -> ModelShape:
    if base is None:
        found = model_for(upstream)
        base = MODELS[found] if found else None
    given = {k: options[k] for k in MODEL_FLAGS if options[k] is not None}
    if base is None:
        if "params_b" not in given:
            raise SizingError(f"cannot tell the size of {upstream!r}: give --model or "
                              "--params-b (and the KV shape, or a kv: block in the policy)")
        base = ModelShape(given.pop("params_b"), 1, 1, 1)
    shape = replace(base, **given)
    if kv_bytes_per_token is not None and not {"layers", "kv_heads", "head_dim"} & set(given):
        shape = replace(shape, kv_bytes_per_token=round(kv_bytes_per_token))  # the policy's
    return shape


def hardware_for(options: dict[str, Any], gpu_type: str | None, hourly: float | None) -> Hardware:
    memory, price = options["gpu_memory_gb"], options["gpu_hourly_usd"]
    name = options["gpu"] or gpu_type
    bandwidth = None
    if name is not None:
        try:
            known = GPUS[find(GPUS, name, "GPU")]
        except KeyError:
            known = None
        if known is not None:
            memory = memory if memory is not None else known.memory_gb
            bandwidth = known.bandwidth_gb_s
    if memory is None:
        raise SizingError(f"unknown GPU {name!r}: give --gpu or --gpu-memory-gb")
    return Hardware(memory, price if price is not None else hourly or 0.0,
                    options["tokens_per_s_per_gpu"], options["overhead"],
                    options["tensor_parallel"], bandwidth)


def plan_one(policy: PolicySet, load: ObservedLoad, options: dict[str, Any],
             base: ModelShape | None) -> DeploymentPlan | tuple[str, str] | None:
    """None for a backend the policy pays no GPUs for; (backend, why) when it cannot be sized."""
    backend = policy.backends.get(load.backend)
    engine = backend.engine if backend is not None else None
    if backend is None or engine is None or engine.gpu_hourly_usd is None:
        return None
    count = engine.gpu_count or 1
    try:
        shape = shape_for(options, base, backend.model, engine.kv_bytes_per_token)
        hw = hardware_for(options, engine.gpu_type, engine.gpu_hourly_usd / count)
        return plan_deployment(load, shape, hw, options["headroom"], count)
    except SizingError as exc:
        return (load.backend, str(exc))


def plans(policy: PolicySet, loads: list[ObservedLoad], options: dict[str, Any],
          base: ModelShape | None) -> list[DeploymentPlan | tuple[str, str]]:
    found = (plan_one(policy, load, options, base) for load in loads)
    return [p for p in found if p is not None]
