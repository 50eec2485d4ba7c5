"""Secrets re-read while the gateway runs: when their files change (Kubernetes swaps mounted
Secrets without a word), on SIGHUP, and with every policy reload (provider key files)."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable

from gateway.policy.store import PolicyStore
from gateway.secret_files import GatewaySecrets

log = logging.getLogger(__name__)


async def watch_secret_files(secrets: GatewaySecrets, interval_s: float) -> None:
    """Kubernetes rewrites a mounted Secret without telling anyone: look for changed files
    every interval (a stat each)."""
    while True:
        await asyncio.sleep(interval_s)
        await asyncio.to_thread(secrets.refresh)


async def reread_everything(secrets: GatewaySecrets, policy_store: PolicyStore) -> None:
    """SIGHUP: the policy (and with it every provider key file) and the gateway's own keys."""
    if not await asyncio.to_thread(policy_store.reload):  # a reload refreshes the keys too
        await asyncio.to_thread(secrets.refresh, force=True)


def on_hangup(reread: Callable[[], Awaitable[None]]) -> Callable[[], None]:
    """Run `reread` on SIGHUP (single-worker serving: uvicorn leaves SIGHUP alone, and its
    default would kill the process; with --workers N the supervisor restarts the workers on
    SIGHUP instead, which reads everything afresh). Returns the undo."""
    loop = asyncio.get_running_loop()
    running: set[asyncio.Task[None]] = set()

    def handler() -> None:
        task = loop.create_task(reread(), name="sighup-reread")
        running.add(task)  # the loop keeps only a weak reference
        task.add_done_callback(running.discard)

    try:
        loop.add_signal_handler(signal.SIGHUP, handler)
    # The loop cannot take signal handlers off the main thread (or on platforms without
    # them): re-reading on SIGHUP is then simply not offered; the file watch still runs.
    except (NotImplementedError, RuntimeError, ValueError) as exc:
        log.info("SIGHUP does not re-read secrets in this process (%s); the secret files "
                 "are still watched", type(exc).__name__)
        return lambda: None
    return lambda: loop.remove_signal_handler(signal.SIGHUP)
