"""An optional copy of every audit event as one JSON line, for tailing and log shipping: the
database is the record, this is not."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import IO

import orjson

from gateway.types import AuditEvent


class JsonLinesMirror:
    """To a file, or to stderr with "-"."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._file: IO[bytes] | None = None

    async def write(self, events: list[AuditEvent]) -> None:
        # Opted-in content is for audit_content only, never for a log file.
        data = b"".join(
            orjson.dumps(e if e.content is None else dataclasses.replace(e, content=None))
            + b"\n" for e in events
        )
        await asyncio.to_thread(self._write_blocking, data)

    def _write_blocking(self, data: bytes) -> None:
        if self._file is None:
            self._file = sys.stderr.buffer if self._path == "-" else open(self._path, "ab")
        self._file.write(data)
        self._file.flush()

    def close(self) -> None:
        if self._file is not None and self._path != "-":
            self._file.close()
        self._file = None
