"""PolicyStore: the current compiled policy, swapped atomically when the file changes.

A new version is swapped in only if it loads and validates; a bad edit is logged and the
running policy stays (a typo never takes a gateway down). The provider key files the policy
names are watched too: a rotated key is a reload.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from gateway.policy.loader import ROUTER_FILE, PolicyError, PolicySet, load_policy
from gateway.secret_files import Signature, signature

# (the policy file's (mtime, size), each key file's signature)
StoreSignature = tuple[tuple[int, int] | None, tuple[Signature, ...]]

log = logging.getLogger("gateway.policy")


class PolicyStore:
    def __init__(
        self,
        path: Path,
        *,
        poll_interval_s: float = 1.0,
        on_reload: Callable[[bool], None] | None = None,
    ) -> None:
        self._path = path
        self._poll_interval_s = poll_interval_s
        self._on_reload = on_reload
        policy_file = self._stat_policy()
        self.current: PolicySet = load_policy(path)
        self._key_files = key_files(self.current)
        self._signature: StoreSignature | None = (policy_file, self._stat_keys())
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[PolicySet], None]] = []

    @classmethod
    def fixed(cls, policy: PolicySet) -> PolicyStore:
        """A store that never reloads (tests, embedded use with an in-memory policy)."""
        store = cls.__new__(cls)
        store._path = None  # type: ignore[assignment]
        store._poll_interval_s = 0.0
        store._signature = None
        store._key_files = ()
        store.current = policy
        store._task = None
        store._on_reload = None
        store._listeners = []
        return store

    def subscribe(self, listener: Callable[[PolicySet], None]) -> None:
        """Called with each new policy once it is in force (e.g. to re-point the scraper)."""
        self._listeners.append(listener)

    def _stat_policy(self) -> tuple[int, int] | None:
        # Size as well as mtime: a file written in two steps within one clock tick still
        # looks changed once it is complete.
        try:
            stat = self._path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _stat_keys(self) -> tuple[Signature, ...]:
        return tuple(signature(path) for path in self._key_files)

    def reload(self) -> bool:
        """Load the file again; True if a new policy is now in force."""
        if self._path is None:  # a fixed policy (see `fixed`) has no file to read again
            return False
        try:
            policy = load_policy(self._path)
        except PolicyError as exc:
            log.error("policy reload rejected, keeping the running policy:\n%s", exc)
            self._report(False)
            return False
        # One reference swap: a request already routing holds the old policy object and
        # finishes on it; every later request sees the new one.
        self.current = policy
        self._key_files = key_files(policy)
        if self._signature is not None:  # the files this policy names, as they were read
            self._signature = (self._signature[0], self._stat_keys())
        log.info("policy reloaded from %s", self._path)
        for listener in self._listeners:
            listener(policy)
        self._report(True)
        return True

    def _report(self, ok: bool) -> None:
        if self._on_reload is not None:
            self._on_reload(ok)

    def start(self) -> None:
        if self._path is not None and self._poll_interval_s > 0:
            self._task = asyncio.create_task(self._watch(), name="policy-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._poll_interval_s)
            policy_file = self._stat_policy()
            if policy_file is None:  # mid-replacement: look again next time
                continue
            now = (policy_file, self._stat_keys())
            if now != self._signature:
                self._signature = now
                # Parsing a large policy takes milliseconds: do it off the event loop.
                await asyncio.to_thread(self.reload)


def key_files(policy: PolicySet) -> tuple[Path, ...]:
    """The files besides the policy whose change is a reload: provider key files, and the
    fitted routers the policy names (a router fitted again in place takes effect)."""
    keys = {Path(b.api_key_file) for b in policy.backends.values()
            if b.api_key_file is not None}
    routers = {d / ROUTER_FILE for d in policy.routers.directories()}
    return tuple(sorted(keys | routers))
