"""Admin-set limits as last read from the database, kept in the last-known file
(db/last_known.py): a replica restarted while the database is down enforces the limits it
last saw instead of refusing every request (an unknown limit is refused, never ignored)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from gateway.db.last_known import LastKnownFile
from gateway.errors import DatabaseUnavailable

SECTION = "limits"
Overrides = dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]]


class RememberedOverrides:
    """Wraps the repository's `overrides(tenant_id)`: each answer is remembered; while the
    database is unavailable the remembered one (if any) is returned instead."""

    def __init__(self, load: Callable[[str], Awaitable[Overrides]], store: LastKnownFile,
                 max_age_s: float) -> None:
        self._load = load
        self._store = store
        self._max_age_s = max_age_s

    async def __call__(self, tenant_id: str) -> Overrides:
        try:
            rows = await self._load(tenant_id)
        except DatabaseUnavailable:
            found = self._store.get(SECTION, tenant_id)
            if found is None or found[1] > self._max_age_s:
                raise
            return {scope: (budget, limits) for scope, (budget, limits) in found[0].items()}
        self._store.put(SECTION, tenant_id, {scope: list(row) for scope, row in rows.items()})
        return rows
