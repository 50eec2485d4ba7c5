"""The report page's capacity section: `gateway plan --from-audit` for the page's days, as
HTML (per self-hosted deployment: the GPUs its busiest minute needs, their monthly cost, the
same traffic on the baseline API, the break-even QPS and what spilling the peak would save).
Every name is escaped."""

from __future__ import annotations

from datetime import datetime
from html import escape

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.capacity.audit_plan import DeploymentPlan
from gateway.capacity.fleet_plan import DEFAULTS, plans
from gateway.capacity.observed import observed_loads
from gateway.capacity.sizing import dollars as _usd
from gateway.policy.loader import PolicySet


class CapacityReport:
    """The section for the report page, read from the database the composition root opened."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def section(self, policy: PolicySet, start: datetime, end: datetime) -> str:
        return await capacity_section(self._engine, policy, start, end)


async def capacity_section(engine: AsyncEngine, policy: PolicySet, start: datetime,
                           end: datetime) -> str:
    async with engine.connect() as conn:
        loads = await observed_loads(conn, start, end)
    return render_capacity(plans(policy, loads, DEFAULTS, None))


def render_capacity(found: list[DeploymentPlan | tuple[str, str]]) -> str:
    if not found:
        return ""
    rows = []
    for p in found:
        if isinstance(p, tuple):
            rows.append(f'<tr><td>{escape(p[0])}</td><td colspan="9">not sized: '
                        f"{escape(p[1])}</td></tr>")
            continue
        o = p.observed
        best = max(p.spills, key=lambda s: s.saved_monthly_usd, default=None)
        spill = (f"{best.share:.0%} of minutes: saves {_usd(best.saved_monthly_usd)}"
                 if best is not None and best.saved_monthly_usd > 0 else "–")
        rows.append(
            f"<tr><td>{escape(p.backend)}</td><td>{o.peak_sessions:,.2f}</td>"
            f"<td>{o.peak_qps:,.3f}</td><td>{o.prompt_tokens_p90:,} / "
            f"{o.output_tokens_p90:,}</td><td>{p.plan.gpus:,}</td>"
            f"<td>{_usd(p.plan.monthly_usd)}</td><td>{_usd(p.baseline_monthly_usd)}</td>"
            f"<td>{o.mean_qps:,.4f}</td>"
            f"<td>{'–' if p.break_even_qps is None else f'{p.break_even_qps:,.4f}'}</td>"
            f"<td>{spill}</td></tr>")
    return (
        '<section id="capacity"><h2>Capacity</h2><p class="note">What each self-hosted '
        "deployment needs for the busiest minute of the range with 20 % headroom (as "
        "<code>gateway plan --from-audit</code> sizes it), against the same traffic on the "
        "baseline API. The break-even QPS is the sustained rate (a month's average, as the "
        "monthly costs beside it are priced) at which the GPUs cost what the baseline API "
        "would: compare it with the mean QPS, not the busiest minute's.</p>"
        "<table><thead><tr><th>Deployment</th><th>Peak in flight</th><th>Peak QPS</th>"
        "<th>p90 prompt / output</th><th>GPUs needed</th><th>Monthly</th>"
        "<th>Baseline API monthly</th><th>Mean QPS</th><th>Break-even QPS (sustained)</th>"
        "<th>Best spill</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
