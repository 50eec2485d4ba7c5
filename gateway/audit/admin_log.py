"""Administrative actions (tenants, keys, limits, policy reloads) as rows of one hash chain,
"admin", in `admin_audit`: the same canonical rows and hashes as the request log, so
`gateway audit verify` checks both alike.

Every replica and CLI shares the one chain, so a row is appended in a transaction that reads
the head, inserts seq + 1 and moves the head; two writers racing for the same seq collide on
the primary key and the loser retries from the new head. Rows never hold secrets: a created
key is recorded by its id and display prefix, never the key. The SQL that appends and reads
the chain is admin_repository.py's.
"""

from __future__ import annotations

import asyncio
import getpass
import hashlib
import logging
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.exc import SQLAlchemyError

from gateway.audit.records import Row, row_hash

if TYPE_CHECKING:
    from gateway.audit.admin_repository import AdminLog

log = logging.getLogger("gateway.audit")

ADMIN_CHAIN = "admin"


def cli_actor() -> str:
    """`cli:<OS user>` for commands run by hand (a uid when the user has no name)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # a container user without a passwd entry
        user = str(os.getuid())
    return f"cli:{user}"


def gateway_actor() -> str:
    """What a gateway process does on its own (a policy file it reloaded)."""
    return f"gateway:{socket.gethostname()[:48]}"


def admin_row(
    seq: int, prev_hash: str, ts_us: int, actor: str, action: str, target: str,
    details: dict[str, Any] | None,
) -> Row:
    """An admin_audit row in canonical form (ts in integer µs), hashed."""
    row: Row = {
        "chain_id": ADMIN_CHAIN, "seq": seq, "ts": ts_us, "prev_hash": prev_hash,
        "actor": actor[:64], "action": action[:64], "target": target[:200],
        "details": details or None,
    }
    row["row_hash"] = row_hash(row)
    return row


class SourcedPolicy(Protocol):
    source: str  # the file a policy was loaded from


class PolicyReloadAudit:
    """A PolicyStore listener: records each policy that came into force as "policy.reload"
    with its source and the SHA-256 of the file. The listener may be called from the reload
    thread; the write runs as a task on the gateway's loop, never blocking the caller."""

    def __init__(self, admin_log: AdminLog, loop: asyncio.AbstractEventLoop,
                 actor: str | None = None) -> None:
        self._log = admin_log
        self._loop = loop
        self._actor = actor or gateway_actor()
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, policy: SourcedPolicy) -> None:
        self._loop.call_soon_threadsafe(self._spawn, policy.source)

    def _spawn(self, source: str) -> None:
        task = self._loop.create_task(self._record(source), name="audit-policy-reload")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _record(self, source: str) -> None:
        digest = await asyncio.to_thread(_file_sha256, source)
        try:
            await self._log.record(self._actor, "policy.reload", source[-200:],
                                   {"sha256": digest})
        except (OSError, SQLAlchemyError):
            log.exception("could not record the policy reload of %s in the admin audit", source)

    async def drain(self) -> None:
        """Wait for the records still being written (shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _file_sha256(source: str) -> str | None:
    try:
        return hashlib.sha256(Path(source).read_bytes()).hexdigest()
    except OSError:
        return None  # an in-memory policy, or a file gone since it loaded

