"""The policy in force: read from its file (or fixed by the caller), every version put in
force recorded in the admin chain, and the GPU deployments it declares recorded from when
they first appear; the file is watched only once everything that follows it is built."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.admin_log import PolicyReloadAudit
from gateway.audit.admin_repository import AdminLog
from gateway.deployments.recorder import DeploymentRecorder
from gateway.deployments.repository import DeploymentLog
from gateway.policy.loader import PolicySet
from gateway.policy.store import PolicyStore
from gateway.reports.gpus import declared_gpus
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics


def open_policy(settings: Settings, fixed: PolicySet | None,
                metrics: GatewayMetrics) -> PolicyStore:
    if fixed is not None:
        return PolicyStore.fixed(fixed)
    return PolicyStore(settings.policy_path, poll_interval_s=settings.policy_poll_interval_s,
                       on_reload=metrics.policy_reloaded)


async def record_policy_changes(stack: AsyncExitStack, policy: PolicyStore,
                                admin_log: AdminLog, engine: AsyncEngine) -> None:
    loop = asyncio.get_running_loop()
    reload_audit = PolicyReloadAudit(admin_log, loop)
    policy.subscribe(reload_audit)  # each policy put in force, in the admin chain
    stack.push_async_callback(reload_audit.drain)
    # GPU-hours are paid from when a policy first declares a deployment: record it now and
    # on every reload, so reports never charge for time before it existed.
    deployments = DeploymentRecorder(DeploymentLog(engine), loop, declared_gpus)
    await deployments.record(declared_gpus(policy.current))
    policy.subscribe(deployments)
    stack.push_async_callback(deployments.drain)


def watch_policy(stack: AsyncExitStack, policy: PolicyStore) -> None:
    """Last: a reload reaches every subscriber, and is the first thing stopped at shutdown."""
    policy.start()
    stack.push_async_callback(policy.stop)
