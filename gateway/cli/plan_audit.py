"""`gateway plan --from-audit`: the plan from the traffic the gateway recorded, per self-hosted
deployment of the policy (or the one --backend names), read from the load rollups."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import click
import orjson

from gateway.cli.report_commands import policy_or_none
from gateway.db.engine import create_engine
from gateway.errors import InvalidRequest
from gateway.policy.loader import PolicySet
from gateway.reports.periods import parse_period
from gateway.settings import Settings
from gateway.tools.audit_plan import DeploymentPlan, plan_deployment
from gateway.tools.catalogue import GPUS, MODELS, find, model_for
from gateway.tools.observed import ObservedLoad, observed_loads
from gateway.tools.sizing import Hardware, ModelShape, SizingError

MODEL_FLAGS = ("params_b", "layers", "kv_heads", "head_dim", "weight_bytes", "kv_bytes")
# What a plan assumes when no flag says otherwise (policy replay sizes with these).
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
    if memory is None and name is not None:
        try:
            memory = GPUS[find(GPUS, name, "GPU")].memory_gb
        except KeyError:
            memory = None
    if memory is None:
        raise SizingError(f"unknown GPU {name!r}: give --gpu or --gpu-memory-gb")
    return Hardware(memory, price if price is not None else hourly or 0.0,
                    options["tokens_per_s_per_gpu"], options["overhead"],
                    options["tensor_parallel"])


def plan_one(policy: PolicySet, load: ObservedLoad, options: dict[str, Any],
             base: ModelShape | None) -> DeploymentPlan | tuple[str, str] | None:
    """None for a backend the policy pays no GPUs for; (backend, why) when it cannot be sized."""
    backend = policy.backends.get(load.backend)
    if backend is None or backend.gpu_hourly_usd is None:
        return None
    count = backend.gpu_count or 1
    try:
        shape = shape_for(options, base, backend.model, backend.kv_bytes_per_token)
        hw = hardware_for(options, backend.gpu_type, backend.gpu_hourly_usd / count)
        return plan_deployment(load, shape, hw, options["headroom"], count)
    except SizingError as exc:
        return (load.backend, str(exc))


def plans(policy: PolicySet, loads: list[ObservedLoad], options: dict[str, Any],
          base: ModelShape | None) -> list[DeploymentPlan | tuple[str, str]]:
    found = (plan_one(policy, load, options, base) for load in loads)
    return [p for p in found if p is not None]


def run_from_audit(options: dict[str, Any], base: ModelShape | None) -> str:
    policy = policy_or_none(options["policy_path"])
    if policy is None:
        raise click.UsageError("--from-audit needs the policy (--policy or "
                               "GATEWAY_POLICY_PATH): it says which deployments have GPUs")
    now = datetime.now(UTC)
    try:
        period = parse_period(options["since"], options["until"], now)
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None
    start, end = period.day_bounds()
    end = max(start, min(end, now))
    url = options["database_url"] or Settings().database_url

    async def read() -> list[ObservedLoad]:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return await observed_loads(conn, start, end,
                                            [options["backend"]] if options["backend"] else None)
        finally:
            await engine.dispose()

    found = plans(policy, asyncio.run(read()), options, base)
    meta = {"since": start.isoformat(), "until": end.isoformat(),
            "headroom": options["headroom"]}
    if options["fmt"] == "json":
        return orjson.dumps({**meta, "deployments": [_json(p) for p in found]},
                            option=orjson.OPT_INDENT_2).decode() + "\n"
    return _text(meta, found)


def _json(found: DeploymentPlan | tuple[str, str]) -> dict[str, Any]:
    if isinstance(found, tuple):
        return {"backend": found[0], "error": found[1]}
    o = found.observed
    return {
        "backend": found.backend,
        "observed": {"peak_sessions": round(o.peak_sessions, 2), "peak_qps": round(o.peak_qps, 3),
                     "prompt_tokens_p90": o.prompt_tokens_p90,
                     "output_tokens_p90": o.output_tokens_p90, "requests": o.requests,
                     "tokens_per_s_per_gpu": found.tokens_per_s_per_gpu},
        **found.plan.as_json(),
        "baseline_monthly_usd": found.baseline_monthly_usd,
        "break_even_qps": None if found.break_even_qps is None
        else round(found.break_even_qps, 4),
        "spill": [{"top_share": s.share, "sessions": s.sessions, "gpus": s.gpus,
                   "spilled_share": round(s.spilled_share, 4),
                   "api_monthly_usd": s.api_monthly_usd,
                   "saved_monthly_usd": s.saved_monthly_usd} for s in found.spills],
    }


def _text(meta: dict[str, Any], found: list[DeploymentPlan | tuple[str, str]]) -> str:
    lines = [f"plan from the audit: {meta['since']} to {meta['until']}, headroom "
             f"{meta['headroom']:.0%}"]
    if not found:
        lines.append("(no self-hosted deployment with GPUs served traffic in this range)")
    for p in found:
        if isinstance(p, tuple):
            lines += ["", f"{p[0]}: {p[1]}"]
            continue
        o = p.observed
        rate = "-" if p.tokens_per_s_per_gpu is None else f"{p.tokens_per_s_per_gpu:,.1f}"
        lines += [
            "", f"{p.backend}",
            f"  observed: peak {o.peak_sessions:,.2f} in flight (busiest minute's mean), "
            f"peak {o.peak_qps:,.3f} QPS, p90 {o.prompt_tokens_p90:,} prompt / "
            f"{o.output_tokens_p90:,} output tokens, {rate} output tok/s per GPU",
            f"  needs: {p.plan.gpus} GPU(s) ({p.plan.gpus_for_memory} for memory, "
            f"{p.plan.gpus_for_throughput} for throughput), ${p.plan.monthly_usd:,.2f} a month",
            f"  the same traffic on the baseline: ${p.baseline_monthly_usd:,.2f} a month; "
            "owning beats renting above "
            + ("-" if p.break_even_qps is None else f"{p.break_even_qps:,.3f} QPS"),
        ]
        for s in p.spills:
            lines.append(
                f"  spill the busiest {s.share:.0%} of minutes: {s.gpus} GPU(s), "
                f"{s.spilled_share:.1%} of load to the API (${s.api_monthly_usd:,.2f}), "
                f"saves ${s.saved_monthly_usd:,.2f} a month")
    return "\n".join(lines) + "\n"
