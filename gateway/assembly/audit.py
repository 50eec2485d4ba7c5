"""The audit writer: journal → batches → Postgres, spooling to disk while the database is
away; started at once, so a spool an earlier run left is replayed."""

from __future__ import annotations

from contextlib import AsyncExitStack

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.journal import Journal
from gateway.audit.mirror import JsonLinesMirror
from gateway.audit.repository import AuditRepository
from gateway.audit.spool import Spool
from gateway.audit.writer import AuditWriter
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics


async def open_audit(stack: AsyncExitStack, settings: Settings, engine: AsyncEngine,
                     metrics: GatewayMetrics) -> AuditWriter:
    audit = AuditWriter(
        AuditRepository(engine), Spool(settings.spool_dir),
        mirror=JsonLinesMirror(settings.audit_log_path) if settings.audit_log_path else None,
        journal=(Journal(fsync_interval_s=settings.audit_journal_fsync_s,
                         max_bytes=settings.audit_journal_max_bytes)
                 if settings.audit_journal else None),
        observer=metrics.requests.observe,
    )
    metrics.watch_audit(audit.numbers)
    await audit.start()
    stack.push_async_callback(audit.stop)  # flushes what is queued, spools what cannot land
    return audit
