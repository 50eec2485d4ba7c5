"""Rows that a local write-ahead journal or spool says exist but the database lacks: the part
of `gateway audit verify` that the hash chains alone cannot see (a row that never reached
the database never entered its chain there).

Each slot of the spool directory is read as it lies on disk. A slot a running gateway holds
(its flock is taken) is still being written, so its missing rows are only pending; a slot
no process holds belongs to a gateway that died, and its missing rows stay missing until a
gateway is started on that directory and replays them.
"""

from __future__ import annotations

import fcntl
import os
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.journal import SUFFIX as JOURNAL_SUFFIX
from gateway.audit.range_repository import stored_positions
from gateway.audit.records import Row
from gateway.audit.spool import SUFFIX as SPOOL_SUFFIX
from gateway.audit.spool import read_segment


@dataclass(frozen=True, slots=True)
class SlotFile:
    path: Path
    live: bool  # a running gateway holds its slot
    rows: list[Row]


@dataclass(frozen=True, slots=True)
class Unwritten:
    """A row on local disk that the database does not hold."""

    path: Path
    live: bool
    row: Row


def local_rows(root: Path) -> list[SlotFile]:
    """Every journal and spool file under the spool directory, with its rows."""
    if not root.is_dir():
        return []
    found: list[SlotFile] = []
    for slot in sorted(p for p in root.iterdir() if p.is_dir()):
        paths = [*sorted(slot.glob(f"*{SPOOL_SUFFIX}")), *sorted(slot.glob(f"*{JOURNAL_SUFFIX}"))]
        if not paths:
            continue
        live = _held(slot / "lock")
        found.extend(SlotFile(path, live, read_segment(path)) for path in paths)
    return found


def _held(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the shared lock taken to test it
    return False


async def unwritten(engine: AsyncEngine, root: Path,
                    quarantined: Collection[tuple[str, int]] = ()) -> list[Unwritten]:
    """Rows in the journal or spool under `root` that audit_log lacks, in file order (rows
    the quarantine file accounts for are left out: verify reports those already)."""
    files = local_rows(root)
    wanted: dict[str, set[int]] = defaultdict(set)
    for file in files:
        for row in file.rows:
            wanted[row["chain_id"]].add(row["seq"])
    stored = await stored_positions(engine, wanted)
    missing: list[Unwritten] = []
    seen: set[tuple[str, int]] = set(quarantined)
    for file in files:
        for row in file.rows:
            key = (row["chain_id"], row["seq"])
            if key not in stored and key not in seen:
                seen.add(key)
                missing.append(Unwritten(file.path, file.live, row))
    return missing
