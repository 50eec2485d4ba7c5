"""Where a secret could end up, gathered for the leak tests to grep: everything the gateway
logs (every logger, at debug) and every value of every column of every table."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import MetaData, select
from sqlalchemy.ext.asyncio import AsyncEngine


@contextmanager
def logs_into(path: Path) -> Iterator[Path]:
    """Every record any logger emits meanwhile, with tracebacks, formatted into `path`."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    before = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield path
    finally:
        root.setLevel(before)
        root.removeHandler(handler)
        handler.close()


async def database_text(engine: AsyncEngine) -> dict[str, str]:
    """Each table's rows as one string: every column's value, whatever its type."""
    async with engine.connect() as conn:
        meta = MetaData()
        await conn.run_sync(meta.reflect)
        dumped = {}
        for name, table in meta.tables.items():
            rows = (await conn.execute(select(table))).all()
            dumped[name] = "\n".join(" | ".join(repr(v) for v in row) for row in rows)
    return dumped


def find(needles: dict[str, str], haystacks: dict[str, str]) -> list[tuple[str, str]]:
    """(which needle, where) for every needle found in any haystack."""
    return sorted((label, where) for label, value in needles.items()
                  for where, text in haystacks.items() if value in text)
