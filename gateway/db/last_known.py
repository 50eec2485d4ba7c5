"""Answers the database gave, kept on local disk for when it cannot be asked: the keys a
replica verified and the admin-set limits it read, so that a replica restarted while the
database is down can still serve what it served before (tenancy/persisted.py,
budget/last_known_limits.py).

One JSON file of sections (`{"keys": {...}, "limits": {...}}`), each entry its value and when
it was last confirmed (unix seconds). The file is rewritten whole (temporary file, fsync,
rename; mode 0600) at most every `save_every_s`, and only after a change. Worker processes
of one gateway share it; the last to save wins, which costs at most entries that only
another worker had confirmed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

log = logging.getLogger("gateway.db")

MAX_ENTRIES = 100_000  # per section
REFRESH_S = 60.0  # an unchanged value confirmed again within this long is not rewritten


class LastKnownFile:
    def __init__(self, path: Path, *, save_every_s: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._path = path
        self._save_every_s = save_every_s
        self._clock = clock
        self._sections: dict[str, dict[str, list[Any]]] = {}
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def load(self) -> None:
        try:
            data = orjson.loads(self._path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("%s unreadable (%s); starting without it", self._path, exc)
            return
        if isinstance(data, dict):
            self._sections = {
                name: {k: v for k, v in entries.items() if isinstance(v, list) and len(v) == 2}
                for name, entries in data.items() if isinstance(entries, dict)
            }

    def count(self, section: str) -> int:
        return len(self._sections.get(section, {}))

    def get(self, section: str, key: str) -> tuple[Any, float] | None:
        """The value and its age in seconds."""
        entry = self._sections.get(section, {}).get(key)
        if entry is None:
            return None
        return entry[0], max(0.0, self._clock() - float(entry[1]))

    def put(self, section: str, key: str, value: Any) -> None:
        entries = self._sections.setdefault(section, {})
        now = self._clock()
        old = entries.get(key)
        if old is not None and old[0] == value and now - float(old[1]) < REFRESH_S:
            return
        if old is None and len(entries) >= MAX_ENTRIES:
            return
        entries[key] = [value, now]
        self._dirty = True

    def drop(self, section: str, key: str) -> None:
        if self._sections.get(section, {}).pop(key, None) is not None:
            self._dirty = True

    def drop_where(self, section: str, matches: Callable[[Any], bool]) -> None:
        entries = self._sections.get(section, {})
        for key in [k for k, (value, _) in entries.items() if matches(value)]:
            del entries[key]
            self._dirty = True

    def start(self) -> None:
        self._task = asyncio.create_task(self._keep_saved(), name="last-known-saver")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.save()

    async def _keep_saved(self) -> None:
        while True:
            await asyncio.sleep(self._save_every_s)
            await self.save()

    async def save(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        data = orjson.dumps(self._sections)
        try:
            await asyncio.to_thread(_write_atomically, self._path, data)
        except OSError as exc:
            self._dirty = True
            log.warning("%s not saved: %s", self._path, exc)


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
