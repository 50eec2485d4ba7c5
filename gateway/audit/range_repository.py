"""Reads of audit_log rows: pages of canonical rows over a time range in log order, and which
chain positions the table holds (for the journal check).

Pages are fetched by keyset (the last row's `(ts, chain_id, seq)`), never by OFFSET, so page
one million costs what page one does and memory holds one page however long the range is.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Row, ts_datetime, ts_micros
from gateway.db.audit_tables import audit_log

DEFAULT_PAGE_ROWS = 5000
KEY_COLUMNS = ("ts", "chain_id", "seq")
CHUNK = 1000  # seqs asked about per query


@dataclass(frozen=True, slots=True)
class AuditRange:
    """Rows with since <= ts < until (aware datetimes), of one tenant when given (matched
    against the tenant id or the tenant's name, whichever the caller knows)."""

    since: datetime
    until: datetime
    tenant: str | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        c = audit_log.c
        where = [c.ts >= self.since, c.ts < self.until]
        if self.tenant is not None:
            where.append(or_(c.tenant_id == self.tenant, c.tenant == self.tenant))
        return where


async def count_rows(engine: AsyncEngine, span: AuditRange) -> int:
    """How many rows the range holds (for a progress bar's length)."""
    async with engine.connect() as conn:
        found = await conn.scalar(
            select(func.count()).select_from(audit_log).where(*span.conditions())
        )
    return int(found or 0)


async def stream_pages(
    engine: AsyncEngine,
    span: AuditRange,
    page_rows: int = DEFAULT_PAGE_ROWS,
    columns: Sequence[str] | None = None,
) -> AsyncIterator[list[Row]]:
    """Pages of canonical rows (as records.from_db makes them) ordered by (ts, chain_id,
    seq): every column, or only `columns` (plus those three) when a reader needs few.

    Each page is its own short query, so no transaction or cursor stays open while the
    caller works on a page, and rows written meanwhile after the last key are still seen.
    """
    c = audit_log.c
    order = (c.ts, c.chain_id, c.seq)
    chosen = select(audit_log) if columns is None else select(
        *(c[name] for name in dict.fromkeys((*KEY_COLUMNS, *columns)))
    )
    after: tuple[int, str, int] | None = None
    while True:
        query = chosen.where(*span.conditions())
        if after is not None:
            query = query.where(*_after(*after))
        async with engine.connect() as conn:
            result = await conn.execute(query.order_by(*order).limit(page_rows))
            # What from_db does per row, with the names converted once per page: at a
            # million rows, per-row key conversion costs more than the query.
            names = [str.__str__(k) for k in result.keys()]
            page = [dict(zip(names, r, strict=True)) for r in result]
        for row in page:
            row["ts"] = ts_micros(row["ts"])
        if not page:
            return
        yield page
        if len(page) < page_rows:
            return
        last = page[-1]
        after = (last["ts"], last["chain_id"], last["seq"])


def _after(ts_us: int, chain_id: str, seq: int) -> list[ColumnElement[bool]]:
    """Strictly after (ts, chain_id, seq), spelled out rather than as a row-value comparison:
    the same SQL on SQLite and Postgres, with a plain `ts >=` bound the ts index can serve.
    Given that bound, a later chain id or a later seq in the same chain is enough: with a
    later ts the row is after anyway."""
    c = audit_log.c
    ts = ts_datetime(ts_us)
    return [
        c.ts >= ts,
        or_(c.ts > ts, c.chain_id > chain_id, and_(c.chain_id == chain_id, c.seq > seq)),
    ]


async def stored_positions(engine: AsyncEngine,
                           wanted: Mapping[str, set[int]]) -> set[tuple[str, int]]:
    """Those of the wanted (chain id → seqs) positions that audit_log holds."""
    stored: set[tuple[str, int]] = set()
    async with engine.connect() as conn:
        for chain_id, seqs in wanted.items():
            ordered = sorted(seqs)
            for start in range(0, len(ordered), CHUNK):
                part = ordered[start:start + CHUNK]
                result = await conn.execute(
                    select(audit_log.c.seq).where(audit_log.c.chain_id == chain_id,
                                                  audit_log.c.seq.in_(part)))
                stored.update((chain_id, seq) for (seq,) in result)
    return stored
