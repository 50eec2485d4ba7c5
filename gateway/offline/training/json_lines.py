"""Reads the JSON-lines files offline tools take from users (outcomes, labelled prompts):
each non-blank line parsed, and a line that is not JSON named by file and line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def json_lines(lines: Iterable[str], source: str,
               error: type[ValueError]) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line; `error` for one that is not
    JSON, as "source:line: not JSON: why"."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{source}:{number}: not JSON: {exc}") from None
