"""A tenant's month so far, priced by the one cost model, for `GET /v1/usage`: the same
figures the cost and savings reports show for that tenant (API spend, its share of the
GPU-hours paid, the baseline and the saving), so no number a tenant sees disagrees."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.budget.pricing import format_usd
from gateway.deployments.repository import DeclaredGpus
from gateway.reports.breakdown import breakdown, total
from gateway.reports.build import GPU_ATTRIBUTION, price
from gateway.reports.periods import Period
from gateway.reports.rollup_repository import Dimension


async def month_cost(engine: AsyncEngine, tenant_id: str, declared: Sequence[DeclaredGpus],
                     now: datetime) -> dict[str, Any]:
    now = now.astimezone(UTC)
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    async with engine.connect() as conn:
        model = await price(conn, Period(first, now), now, declared)
    mine = total(breakdown(model, Dimension.TENANT, tenant_id))
    return {
        "since": first.isoformat(), "until": model.end.isoformat(),
        "requests": mine.requests,
        "api_cost_usd": format_usd(mine.api_micro_usd),
        "gpu_cost_usd": format_usd(mine.gpu_micro_usd),
        "cost_usd": format_usd(mine.cost_micro_usd),
        "baseline_usd": format_usd(mine.baseline_micro_usd),
        "saved_usd": format_usd(mine.saved_micro_usd),
        # The savings report's split: a tenant's view has no idle GPUs (nobody's), so all
        # of its saving is routing's; the note says where the idle ones went.
        "routing_saved_usd": format_usd(mine.routing_saved_micro_usd),
        "idle_gpu_usd": format_usd(mine.idle_gpu_micro_usd),
        "idle_gpu_note": "idle GPU-hours are not attributed to tenants",
        "gpu_attribution": GPU_ATTRIBUTION,
    }
