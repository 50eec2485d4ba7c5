"""Reads the JSON-lines audit mirror the way a log shipper does: the writer appends from
another process, so a read can catch the last line half written, and only lines that end in a
newline are complete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson


def mirror_rows(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes() if path.exists() else b""
    complete, _, _partial = data.rpartition(b"\n")
    return [orjson.loads(line) for line in complete.splitlines() if line]
