"""Push invalidation of the key cache: one Postgres LISTEN connection per gateway process on
the channel the repository NOTIFYs (a key revoked, a tenant enabled or disabled), so every
replica forgets the affected entries within milliseconds of the commit.

While the channel is down (the database restarting, a network cut) the cache TTL
(GATEWAY_KEY_CACHE_TTL_S) bounds how long a revoked key keeps working. When the channel
comes back, notifications sent in between are lost, so the whole cache is dropped then:
revocations made meanwhile apply from that moment. A silent half-open connection is found
by a probe every `probe_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import asyncpg
import orjson
from sqlalchemy.engine import make_url

from gateway.tenancy.repository import CHANNEL

log = logging.getLogger("gateway.tenancy")

Change = dict[str, str]


# libpq-style options asyncpg reads from a DSN; anything else in the URL's query is an
# SQLAlchemy option (or would be sent to the server as a setting and refused).
_DSN_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "application_name",
                "target_session_attrs", "connect_timeout")


def listen_dsn(database_url: str) -> str | None:
    """A plain asyncpg DSN for a Postgres database URL; None for anything else (SQLite).
    SQLAlchemy's asyncpg `?ssl=require` becomes libpq's `sslmode=require`."""
    url = make_url(database_url)
    if not url.drivername.startswith("postgresql"):
        return None
    query = {k: v for k, v in url.query.items() if k in _DSN_OPTIONS}
    if "ssl" in url.query and "sslmode" not in query:
        query["sslmode"] = url.query["ssl"]
    return url.set(drivername="postgresql", query=query).render_as_string(hide_password=False)


class KeyChangeListener:
    def __init__(self, dsn: str, *, on_change: Callable[[Change], None],
                 on_gap: Callable[[], None], retry_s: float = 1.0, probe_s: float = 5.0,
                 connect_timeout_s: float = 5.0) -> None:
        self._dsn = dsn
        self._on_change = on_change
        self._on_gap = on_gap
        self._retry_s = retry_s
        self._probe_s = probe_s
        self._connect_timeout_s = connect_timeout_s
        self._task: asyncio.Task[None] | None = None
        self.connected = False
        self.received = 0

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="key-change-listener")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        first = True
        while True:
            try:
                await self._listen(gap=not first)
            except (OSError, asyncpg.PostgresError, TimeoutError,
                    asyncpg.InterfaceError) as exc:
                if self.connected or first:
                    log.warning("key change channel down (%s: %s); revocations reach this "
                                "replica within the key cache TTL until it is back",
                                type(exc).__name__, exc)
            self.connected = False
            first = False
            await asyncio.sleep(self._retry_s)

    async def _listen(self, *, gap: bool) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=self._connect_timeout_s)
        lost = asyncio.Event()
        try:
            conn.add_termination_listener(lambda _: lost.set())
            await conn.add_listener(CHANNEL, self._heard)
            self.connected = True
            if gap:
                log.info("key change channel back; forgetting every cached key")
                self._on_gap()
            while not lost.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(lost.wait(), self._probe_s)
                if not lost.is_set():
                    await conn.fetchval("SELECT 1", timeout=self._connect_timeout_s)
            raise ConnectionResetError("the LISTEN connection closed")
        finally:
            with contextlib.suppress(OSError, TimeoutError, asyncpg.PostgresError,
                                     asyncpg.InterfaceError):  # it may be dead already
                await asyncio.wait_for(conn.close(), self._connect_timeout_s)

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        self.received += 1
        try:
            change = orjson.loads(payload)
        except orjson.JSONDecodeError:
            change = None
        if not isinstance(change, dict):
            change = {}  # unknown: forget everything rather than guess
        self._on_change(change)
