"""`gateway plan`: how many GPUs a model and a workload need, and what they cost a month, from
explicit inputs, a catalogue model (--model), a Hugging Face config.json (--model-config) and
a catalogue GPU (--gpu); explicit flags win over both. `--from-audit` sizes from observed
traffic instead (gateway/cli/plan_audit.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from gateway.capacity.sizing import (
        Hardware,
        ModelShape,
        SizingPlan,
        Workload,
    )


MODEL_FLAGS = ("params_b", "layers", "kv_heads", "head_dim", "weight_bytes", "kv_bytes")


def _model(options: dict[str, Any]) -> ModelShape:
    from gateway.capacity.catalogue import MODELS
    from gateway.capacity.sizing import ModelShape
    from gateway.offline.planning.model_config import ConfigError, shape_from_config

    shape: ModelShape | None = None
    if options["model"]:
        shape = MODELS[_find(MODELS, options["model"], "model", "--model")]
    if options["model_config"]:
        try:
            config = json.loads(Path(options["model_config"]).read_text(encoding="utf-8"))
            shape = shape_from_config(config, options["params_b"])
        except (OSError, ValueError, ConfigError) as exc:
            raise click.BadParameter(str(exc), param_hint="--model-config") from None
    given = {k: options[k] for k in MODEL_FLAGS if options[k] is not None}
    if shape is not None:
        return replace(shape, **given)
    missing = [f"--{k.replace('_', '-')}" for k in MODEL_FLAGS[:4] if k not in given]
    if missing:
        raise click.UsageError(f"give --model, --model-config or {', '.join(missing)}")
    return ModelShape(**given)


def _find(table: dict[str, Any], name: str, what: str, hint: str) -> str:
    from gateway.capacity.catalogue import find

    try:
        return find(table, name, what)
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0]), param_hint=hint) from None


def _hardware(options: dict[str, Any]) -> Hardware:
    from gateway.capacity.catalogue import GPUS
    from gateway.capacity.sizing import Hardware

    memory, price = options["gpu_memory_gb"], options["gpu_hourly_usd"]
    bandwidth = None
    if options["gpu"]:
        gpu = GPUS[_find(GPUS, options["gpu"], "GPU", "--gpu")]
        memory = memory if memory is not None else gpu.memory_gb
        price = price if price is not None else gpu.hourly_usd
        bandwidth = gpu.bandwidth_gb_s
    if memory is None:
        raise click.UsageError("give --gpu or --gpu-memory-gb")
    return Hardware(memory, price or 0.0, options["tokens_per_s_per_gpu"], options["overhead"],
                    options["tensor_parallel"], bandwidth)


def _workload(options: dict[str, Any]) -> Workload:
    from gateway.capacity.sizing import Workload

    if options["prompt_tokens"] is None or options["output_tokens"] is None:
        raise click.UsageError("give --prompt-tokens and --output-tokens")
    return Workload(options["prompt_tokens"], options["output_tokens"], options["sessions"],
                    options["users"], options["concurrency"], options["peak_qps"] or 0.0,
                    options["context_cap"], options["prefix_hit_rate"])


def _gb(n: float) -> str:
    from gateway.capacity.sizing import GB

    return f"{n / GB:,.2f} GB"


def plan_lines(plan: SizingPlan) -> list[tuple[str, str]]:
    return [
        ("weights", _gb(plan.weights_bytes)),
        ("KV per token", f"{plan.kv_bytes_per_token:,} bytes"),
        ("KV per session", _gb(plan.kv_bytes_per_session)),
        ("concurrent sessions", f"{plan.concurrent_sessions:,}"),
        ("KV total", _gb(plan.kv_bytes_total)),
        ("memory total (with overhead)", _gb(plan.vram_bytes_total)),
        ("weights per GPU", _gb(plan.weights_bytes_per_gpu)),
        ("KV headroom per GPU", _gb(plan.kv_headroom_bytes_per_gpu)),
        ("GPUs for memory", f"{plan.gpus_for_memory:,}"),
        ("tokens/s needed", f"{plan.tokens_per_s_needed:,.0f}"),
        ("tokens/s per GPU", "-" if plan.tokens_per_s_per_gpu is None
         else f"{plan.tokens_per_s_per_gpu:,.0f} ({plan.throughput_basis})"),
        ("GPUs for throughput", f"{plan.gpus_for_throughput:,}"),
        ("GPUs", f"{plan.gpus:,}" + (f" (TP {plan.tensor_parallel})"
                                      if plan.tensor_parallel else "")),
        ("monthly cost", f"${plan.monthly_usd:,.2f} (730 h)"),
    ]


def render_plan(plan: SizingPlan, variants: list[tuple[str, SizingPlan | str]] | None,
                fmt: str) -> str:
    from gateway.capacity.sizing import SizingPlan

    if fmt == "json":
        body: dict[str, Any] = plan.as_json()
        if variants is not None:
            body["what_ifs"] = [
                {"name": name, **(v.as_json() if isinstance(v, SizingPlan) else {"error": v})}
                for name, v in variants
            ]
        return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"
    width = max(len(k) for k, _ in plan_lines(plan))
    out = [f"{k.ljust(width)}  {v}" for k, v in plan_lines(plan)]
    if variants is not None:
        out += ["", f"{'what if':<17} GPUs  memory  throughput  monthly        VRAM total"]
        for name, v in variants:
            if isinstance(v, str):
                out.append(f"{name:<17} {v}")
            else:
                out.append(f"{name:<17} {v.gpus:>4}  {v.gpus_for_memory:>6}  "
                           f"{v.gpus_for_throughput:>10}  ${v.monthly_usd:>12,.2f}  "
                           f"{_gb(v.vram_bytes_total)}")
    return "\n".join(out) + "\n"


def _options(command: Any) -> Any:
    from gateway.capacity.catalogue import GPUS, MODELS

    for option in reversed((
        click.option("--model", default=None,
                     help=f"a catalogue model: {', '.join(MODELS)}"),
        click.option("--model-config", type=click.Path(exists=True, dir_okay=False),
                     default=None, help="a Hugging Face config.json (layers, KV heads, head "
                     "dim, dtype; parameters estimated, or --params-b)"),
        click.option("--params-b", type=float, default=None, help="parameters, in billions"),
        click.option("--layers", type=click.IntRange(min=1), default=None),
        click.option("--kv-heads", type=click.IntRange(min=1), default=None),
        click.option("--head-dim", type=click.IntRange(min=1), default=None),
        click.option("--weight-bytes", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="bytes per weight: 2 (BF16), 1 (FP8), 0.5 (INT4)"),
        click.option("--kv-bytes", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="bytes per KV-cache element: 2 (BF16), 1 (FP8)"),
        click.option("--gpu", default=None, help=f"a catalogue GPU: {', '.join(GPUS)}"),
        click.option("--gpu-memory-gb", type=click.FloatRange(min=0, min_open=True),
                     default=None, help="memory per GPU in 10^9 bytes"),
        click.option("--gpu-hourly-usd", type=click.FloatRange(min=0), default=None,
                     help="one GPU per hour (default: the catalogue's list price)"),
        click.option("--users", type=click.FloatRange(min=0), default=None),
        click.option("--concurrency", type=click.FloatRange(0, 1), default=None,
                     help="share of users with a request in flight at the peak"),
        click.option("--sessions", type=click.FloatRange(min=0), default=None,
                     help="concurrent sessions, instead of --users × --concurrency"),
        click.option("--prompt-tokens", type=click.IntRange(min=0), default=None),
        click.option("--output-tokens", type=click.IntRange(min=0), default=None),
        click.option("--overhead", type=click.FloatRange(min=0), default=0.1,
                     show_default=True, help="activations, CUDA graphs, fragmentation"),
        click.option("--peak-qps", type=click.FloatRange(min=0), default=None),
        click.option("--tokens-per-s-per-gpu", type=click.FloatRange(min=0, min_open=True),
                     default=None, help="output tokens per second one GPU sustains"),
        click.option("--tensor-parallel", type=click.IntRange(min=1), default=None,
                     help="what-if: GPUs per replica (weights split across them)"),
        click.option("--context-cap", type=click.IntRange(min=1), default=None,
                     help="what-if: tokens per session at most"),
        click.option("--prefix-hit-rate", type=click.FloatRange(0, 1), default=0.0,
                     help="what-if: share of prompt tokens a shared prefix cache holds once"),
        click.option("--what-ifs", is_flag=True,
                     help="also size FP8 / INT4 weights and an FP8 KV cache"),
        click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                     show_default=True),
        click.option("--from-audit", is_flag=True,
                     help="size each self-hosted deployment from the traffic the gateway "
                     "recorded (the load rollups), instead of --sessions and friends"),
        click.option("--since", default=None,
                     help="--from-audit: as `gateway report` (7d, 24h, 2026-11-01; "
                     "default: a week)"),
        click.option("--until", default=None, help="--from-audit: as `gateway report`"),
        click.option("--backend", default=None, help="--from-audit: only this deployment"),
        click.option("--headroom", type=click.FloatRange(min=0), default=0.2,
                     show_default=True, help="--from-audit: spare capacity over the peak"),
        click.option("--policy", "policy_path", type=click.Path(path_type=Path), default=None,
                     help="--from-audit: the policy (default: GATEWAY_POLICY_PATH)"),
        click.option("--database-url", default=None,
                     help="--from-audit: default GATEWAY_DATABASE_URL"),
    )):
        command = option(command)
    return command


@click.command("plan")
@_options
def plan(**options: Any) -> None:
    """GPUs a model and workload need (memory and throughput) and their monthly cost."""
    from gateway.capacity.sizing import SizingError, size, what_ifs
    from gateway.cli.plan_audit import run_from_audit

    if options["from_audit"]:
        base = _model(options) if options["model"] or options["model_config"] else None
        click.echo(run_from_audit(options, base), nl=False)
        return
    model, work, hw = _model(options), _workload(options), _hardware(options)
    try:
        result = size(model, work, hw)
    except SizingError as exc:
        raise click.UsageError(str(exc)) from None
    variants = what_ifs(model, work, hw) if options["what_ifs"] else None
    click.echo(render_plan(result, variants, options["fmt"]), nl=False)
