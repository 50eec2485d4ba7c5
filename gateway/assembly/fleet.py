"""What the fleet is doing: the breaker-guarded FleetState routing snapshots, fed by scraping
every vLLM backend's /metrics and the DCGM exporters the policy names, following reloads."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.assembly.tasks import wait_or_cancel
from gateway.deployments.gpu_minutes import GpuMinuteLog
from gateway.policy.loader import PolicySet
from gateway.policy.store import PolicyStore
from gateway.routing.fleet_view import fleet_view
from gateway.scraper.breaker import BreakerConfig
from gateway.scraper.dcgm_poller import DcgmPoller
from gateway.scraper.fleet import FleetState
from gateway.scraper.poller import MetricsPoller
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics


def open_fleet(settings: Settings, policy: PolicyStore, metrics: GatewayMetrics) -> FleetState:
    fleet = FleetState(breaker=BreakerConfig(
        failures_to_open=settings.breaker_failures,
        error_rate_to_open=settings.breaker_error_rate,
        min_attempts=settings.breaker_min_attempts,
        cooldown_s=settings.breaker_cooldown_s,
    ))
    metrics.watch_fleet(lambda: fleet_view(fleet.details(), policy.current))
    return fleet


def start_scrapers(stack: AsyncExitStack, fleet: FleetState, policy: PolicyStore,
                         engine: AsyncEngine,
                         transport: httpx.AsyncBaseTransport | None) -> None:
    client = httpx.AsyncClient(limits=httpx.Limits(max_connections=64), transport=transport)
    stack.push_async_callback(client.aclose)  # registered first: closed after both scrapers
    telemetry = policy.current.telemetry
    poller = MetricsPoller(client, fleet, interval_s=telemetry.scrape_interval_s,
                           timeout_s=telemetry.scrape_timeout_s)
    # GPU utilisation and memory from DCGM exporters, where the policy names one.
    gpu_log = GpuMinuteLog(engine)
    dcgm = DcgmPoller(client, gpu_log)

    def follow(new_policy: PolicySet) -> None:
        poller.set_targets(new_policy.metrics_targets())
        dcgm.set_targets(new_policy.dcgm_targets())
        fleet.retain(new_policy.backends)

    follow(policy.current)
    policy.subscribe(follow)
    flushing = asyncio.create_task(gpu_log.run(), name="gpu-telemetry")
    stack.push_async_callback(gpu_log.close, flushing)
    gpu_scraping = asyncio.create_task(dcgm.run(), name="dcgm-scraper")

    async def stop_dcgm() -> None:
        dcgm.stop()
        await wait_or_cancel(gpu_scraping, 5)

    stack.push_async_callback(stop_dcgm)
    scraping = asyncio.create_task(poller.run(), name="metrics-scraper")

    async def stop_poller() -> None:
        poller.stop()  # the scrape in flight ends on its own timeout
        await wait_or_cancel(scraping, 2 * telemetry.scrape_timeout_s + 1)

    stack.push_async_callback(stop_poller)
