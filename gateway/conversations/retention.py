"""Retention of stored responses: expired rows are already unreadable (every read checks
`expires_at`); this loop deletes them, so the table holds only what may still be read."""

from __future__ import annotations

import asyncio
import logging

from gateway.conversations.repository import ResponseRepository
from gateway.errors import DatabaseUnavailable

log = logging.getLogger("gateway.conversations")
PURGE_INTERVAL_S = 3600.0


async def keep_purging(repository: ResponseRepository,
                       interval_s: float = PURGE_INTERVAL_S) -> None:
    while True:
        try:
            purged = await repository.purge_expired()
        except DatabaseUnavailable:
            log.warning("expired responses not purged: the database is unavailable")
        else:
            if purged:
                log.info("purged %d expired stored responses", purged)
        await asyncio.sleep(interval_s)
