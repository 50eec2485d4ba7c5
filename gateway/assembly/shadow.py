"""Shadow judging: a sample of cheaper answers re-asked of the strong backend and judged, off
the request path, each call accounted by the fleet; its worker stops before the providers it
calls are closed."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack

from gateway.outcomes.repository import OutcomeRepository
from gateway.routing.seams import FleetTracker
from gateway.routing.shadow import ShadowJudge
from gateway.telemetry.metrics import GatewayMetrics
from gateway.upstream import Provider


async def open_shadow_judge(stack: AsyncExitStack, providers: Mapping[str, Provider],
                            fleet: FleetTracker, outcomes: OutcomeRepository,
                            metrics: GatewayMetrics) -> ShadowJudge:
    shadow = ShadowJudge(providers, fleet, outcomes)
    metrics.watch_shadow(shadow.numbers)
    await shadow.start()
    stack.push_async_callback(shadow.stop)
    return shadow
