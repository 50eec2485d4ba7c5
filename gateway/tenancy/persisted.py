"""Keys this replica has verified, kept on local disk so that a restart while the database is
down can still serve them (authenticator.py).

Only each key's hash is written (the same SHA-256 or HMAC the database stores), with its
tenant and when it was last verified: the file lets nobody present a key. It is rewritten
whole (temporary file, fsync, rename; mode 0600) at most every `save_every_s`, and only when
something changed. Worker processes of one gateway share the file; the last to save wins,
which costs at most the keys only another worker had verified. Revocations and tenant
changes heard on the key change channel, and any key the database refuses, are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from gateway.tenancy.keys import hash_key
from gateway.types import TenantContext

log = logging.getLogger("gateway.tenancy")

MAX_KEYS = 100_000
REFRESH_S = 60.0  # a key verified again within this long is not rewritten for it


class KeyFile:
    def __init__(self, path: Path, pepper: bytes | None, *, save_every_s: float = 5.0,
                 clock: Callable[[], float] = time.time) -> None:
        self._path = path
        self._pepper = pepper
        self._save_every_s = save_every_s
        self._clock = clock
        # key hash → [tenant id, tenant name, key id, enabled, verified at (unix s)]
        self._entries: dict[str, list[object]] = {}
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def load(self) -> None:
        try:
            data = orjson.loads(self._path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("persisted key cache %s unreadable (%s); starting without it",
                        self._path, exc)
            return
        if isinstance(data, dict):
            self._entries = {k: v for k, v in data.items()
                             if isinstance(v, list) and len(v) == 5}
        if self._entries:
            log.info("persisted key cache: %d keys verified by an earlier run", len(self))

    def get(self, key: str, max_age_s: float) -> tuple[TenantContext, float] | None:
        entry = self._entries.get(hash_key(key, self._pepper))
        if entry is None:
            return None
        tenant_id, name, key_id, enabled, at = entry
        age_s = self._clock() - float(at)  # type: ignore[arg-type]
        if age_s > max_age_s:
            return None
        return TenantContext(tenant_id=str(tenant_id), tenant_name=str(name),
                             key_id=str(key_id), enabled=bool(enabled)), max(0.0, age_s)

    def verified(self, key: str, tenant: TenantContext) -> None:
        digest = hash_key(key, self._pepper)
        now = self._clock()
        old = self._entries.get(digest)
        if old is not None and old[:4] == [tenant.tenant_id, tenant.tenant_name, tenant.key_id,
                                           tenant.enabled] and now - float(old[4]) < REFRESH_S:  # type: ignore[arg-type]
            return
        if old is None and len(self._entries) >= MAX_KEYS:
            return
        self._entries[digest] = [tenant.tenant_id, tenant.tenant_name, tenant.key_id,
                                 tenant.enabled, now]
        self._dirty = True

    def refused(self, key: str) -> None:
        if self._entries.pop(hash_key(key, self._pepper), None) is not None:
            self._dirty = True

    def forget(self, change: dict[str, str]) -> None:
        key_id, tenant = change.get("key_id"), change.get("tenant")
        drop = [h for h, e in self._entries.items()
                if (key_id is None and tenant is None) or e[2] == key_id or e[1] == tenant]
        for digest in drop:
            del self._entries[digest]
        self._dirty = self._dirty or bool(drop)

    def start(self) -> None:
        self._task = asyncio.create_task(self._keep_saved(), name="key-cache-saver")

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
        data = orjson.dumps(self._entries)
        try:
            await asyncio.to_thread(_write_atomically, self._path, data)
        except OSError as exc:
            self._dirty = True
            log.warning("persisted key cache %s not saved: %s", self._path, exc)


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
