"""`gateway plan --from-audit`: the plan from the traffic the gateway recorded, per self-hosted
deployment of the policy (or the one --backend names), read from the load rollups."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click
import orjson

if TYPE_CHECKING:  # loaded when a command runs (cli/main.py): usage errors answer at once
    from gateway.capacity.audit_plan import DeploymentPlan
    from gateway.capacity.observed import ObservedLoad
    from gateway.capacity.sizing import ModelShape



def run_from_audit(options: dict[str, Any], base: ModelShape | None) -> str:
    from gateway.capacity.fleet_plan import plans
    from gateway.capacity.observed import observed_loads
    from gateway.cli.database import Database, run_with_database
    from gateway.cli.report_commands import policy_or_none
    from gateway.errors import InvalidRequest
    from gateway.reports.periods import parse_period

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

    async def read(db: Database) -> list[ObservedLoad]:
        async with db.engine.connect() as conn:
            return await observed_loads(conn, start, end,
                                        [options["backend"]] if options["backend"] else None)

    found = plans(policy, run_with_database(read, database_url=options["database_url"],
                                         read_only=True),
                  options, base)
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
                     "mean_qps": round(o.mean_qps, 6),
                     "prompt_tokens_p90": o.prompt_tokens_p90,
                     "output_tokens_p90": o.output_tokens_p90, "requests": o.requests,
                     "peak_output_tokens_per_s": round(o.peak_output_tokens_per_s, 3)},
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
    from gateway.capacity.sizing import dollars

    for p in found:
        if isinstance(p, tuple):
            lines += ["", f"{p[0]}: {p[1]}"]
            continue
        o = p.observed
        rate = ("not sized: give --tokens-per-s-per-gpu, or a gpu type the catalogue knows"
                if p.tokens_per_s_per_gpu is None
                else f"{p.tokens_per_s_per_gpu:,.1f} output tok/s per GPU "
                     f"({p.plan.throughput_basis})")
        lines += [
            "", f"{p.backend}",
            f"  observed: peak {o.peak_sessions:,.2f} in flight (busiest minute's mean), "
            f"peak {o.peak_qps:,.3f} QPS, p90 {o.prompt_tokens_p90:,} prompt / "
            f"{o.output_tokens_p90:,} output tokens, busiest minute "
            f"{o.peak_output_tokens_per_s:,.1f} output tok/s",
            f"  capacity: {rate}",
            f"  needs: {p.plan.gpus} GPU(s) ({p.plan.gpus_for_memory} for memory, "
            f"{p.plan.gpus_for_throughput} for throughput), {dollars(p.plan.monthly_usd)} a month",
            f"  the same traffic on the baseline: {dollars(p.baseline_monthly_usd)} a month; "
            "owning beats renting above "
            + ("-" if p.break_even_qps is None else f"{p.break_even_qps:,.4f} QPS sustained")
            + f" (observed mean {o.mean_qps:,.4f} QPS)",
        ]
        for s in p.spills:
            lines.append(
                f"  spill the busiest {s.share:.0%} of minutes: {s.gpus} GPU(s), "
                f"{s.spilled_share:.1%} of load to the API ({dollars(s.api_monthly_usd)}), "
                f"saves {dollars(s.saved_monthly_usd)} a month")
    return "\n".join(lines) + "\n"
