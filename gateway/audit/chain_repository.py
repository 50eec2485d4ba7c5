"""Reads the chains of a time range for verification (gateway/audit/verify.py), one chain at a
time and in pages by seq, so memory stays flat however many millions of rows a range holds.

A chain's range is the seq span of its rows whose `ts` falls in [since, until); every row of
that span is checked (a row whose clock stepped back still sits at its place in the chain),
plus the stored row just before and just after it for the links at both ends. Request rows
live in `audit_log`, administrative rows in `admin_audit` (chain "admin"); `audit_chains`
holds the heads of both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from sqlalchemy import ColumnElement, Table, and_, func, select, true
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Row, from_db, ts_micros
from gateway.audit.verify import ChainCheck, Head, Quarantined, VerifyReport
from gateway.db.audit_tables import admin_audit, audit_chains, audit_log

ADMIN_CHAIN = "admin"
PAGE_ROWS = 2_000


async def verify_range(
    engine: AsyncEngine, since: datetime | None, until: datetime | None,
    *, page_rows: int = PAGE_ROWS, quarantined: Quarantined | None = None,
) -> VerifyReport:
    """Every chain with rows in [since, until) (either end open when None), and every chain
    whose head moved in that window, checked to its first break. Gaps that `quarantined`
    rows fill exactly are reported as such (see verify.py)."""
    held = quarantined or {}
    report = VerifyReport()
    heads = await _heads(engine)
    spans = {
        **await _spans(engine, audit_log, since, until),
        **await _spans(engine, admin_audit, since, until),
    }
    for chain_id, (first, last) in sorted(spans.items()):
        table = admin_audit if chain_id == ADMIN_CHAIN else audit_log
        check = ChainCheck(chain_id, held)
        before = await _neighbour(engine, table, chain_id, first, before=True)
        if before is not None:
            check.check(before, link_only=True)
        async for row in _rows(engine, table, chain_id, first, last, page_rows):
            if check.check(row) is not None:
                break
        after = await _neighbour(engine, table, chain_id, last, before=False)
        if after is not None:
            check.check(after, link_only=True)
        tail = await _tail(engine, table, chain_id)
        last_stored, head = tail if tail is not None else (None, None)
        check.finish(last_stored, head)  # no head at all is a break too
        report.add(check)
    # Chains whose head moved in the window but which have no rows in it: all cut off?
    for chain_id, updated_at in sorted(heads.items()):
        if chain_id in spans or not _within(updated_at, since, until):
            continue
        table = admin_audit if chain_id == ADMIN_CHAIN else audit_log
        tail = await _tail(engine, table, chain_id)
        if tail is not None:
            check = ChainCheck(chain_id, held)
            check.finish(*tail)
            report.add(check)
    return report


def _within(moment: datetime, since: datetime | None, until: datetime | None) -> bool:
    at = ts_micros(moment)
    return ((since is None or at >= ts_micros(since))
            and (until is None or at < ts_micros(until)))


def _in_range(table: Table, since: datetime | None, until: datetime | None) -> ColumnElement[bool]:
    return and_(
        table.c.ts >= since if since is not None else true(),
        table.c.ts < until if until is not None else true(),
    )


async def _spans(
    engine: AsyncEngine, table: Table, since: datetime | None, until: datetime | None
) -> dict[str, tuple[int, int]]:
    query = (
        select(table.c.chain_id, func.min(table.c.seq), func.max(table.c.seq))
        .where(_in_range(table, since, until))
        .group_by(table.c.chain_id)
    )
    async with engine.connect() as conn:
        return {chain: (low, high) for chain, low, high in await conn.execute(query)}


async def _heads(engine: AsyncEngine) -> dict[str, datetime]:
    """Every chain with a head, and when its head last moved."""
    async with engine.connect() as conn:
        result = await conn.execute(select(audit_chains.c.chain_id, audit_chains.c.updated_at))
        return {chain: updated_at for chain, updated_at in result}


async def _rows(
    engine: AsyncEngine, table: Table, chain_id: str, first: int, last: int, page_rows: int
) -> AsyncIterator[Row]:
    """The chain's rows first..last in seq order, a page per query (keyset, not OFFSET)."""
    after = first - 1
    while after < last:
        query = (
            select(table)
            .where(table.c.chain_id == chain_id, table.c.seq > after, table.c.seq <= last)
            .order_by(table.c.seq)
            .limit(page_rows)
        )
        async with engine.connect() as conn:
            page = [from_db(r._asdict()) for r in await conn.execute(query)]
        if not page:
            return
        for row in page:
            yield row
        after = page[-1]["seq"]


async def _neighbour(
    engine: AsyncEngine, table: Table, chain_id: str, seq: int, *, before: bool
) -> Row | None:
    """The stored row nearest to seq on one side (not seq±1: that one may be the missing)."""
    query = select(table).where(table.c.chain_id == chain_id)
    if before:
        query = query.where(table.c.seq < seq).order_by(table.c.seq.desc())
    else:
        query = query.where(table.c.seq > seq).order_by(table.c.seq)
    async with engine.connect() as conn:
        found = (await conn.execute(query.limit(1))).first()
    return None if found is None else from_db(found._asdict())


async def _tail(
    engine: AsyncEngine, table: Table, chain_id: str
) -> tuple[Row | None, Head] | None:
    """The chain's last stored row and its head. Head and last seq come from one statement,
    so one snapshot: a writer appending meanwhile moves both together (same transaction)."""
    last_seq = (
        select(func.max(table.c.seq)).where(table.c.chain_id == chain_id).scalar_subquery()
    )
    query = select(audit_chains.c.seq, audit_chains.c.row_hash, last_seq.label("last_seq")) \
        .where(audit_chains.c.chain_id == chain_id)
    async with engine.connect() as conn:
        head = (await conn.execute(query)).first()
        if head is None:
            return None  # pruned meanwhile
        last = None
        if head.last_seq is not None:
            found = (await conn.execute(select(table).where(
                table.c.chain_id == chain_id, table.c.seq == head.last_seq))).first()
            last = None if found is None else from_db(found._asdict())
    return last, Head(head.seq, head.row_hash)
