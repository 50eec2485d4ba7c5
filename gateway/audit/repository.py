"""All audit SQL for the write path: a batch of chained rows, their rollups and the chain
heads, in one transaction, on Postgres or SQLite.

Inserting is idempotent: a batch replayed after a commit whose acknowledgement was lost
inserts nothing twice (the primary key includes the chain position), and only rows actually
inserted are added to the rollups.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from gateway.audit.bulk_repository import add_on_conflict, bulk_insert
from gateway.audit.records import CONTENT, Row, ts_datetime
from gateway.audit.rollup import COUNTERS, SUMS, Rollup, rollup
from gateway.db.audit_tables import (
    audit_chains,
    audit_content,
    audit_daily,
    audit_latency,
    audit_log,
    backend_busy_minutes,
)
from gateway.db.deployment_tables import audit_token_sizes, backend_load_minutes
from gateway.db.dialect import insert_for


class Statements(NamedTuple):
    """The write path's statements for one dialect. Built once: SQLAlchemy's construction of
    an upsert (the `excluded` alias, each `col + excluded.col`, the cache key) cost several
    milliseconds of CPU per batch, more than the database's own work on a batch of rows."""

    log: Any  # audit_log rows; SQLite only (Postgres goes through bulk_repository)
    daily: Any
    latency: Any
    busy: Any
    load: Any
    sizes: Any
    heads: Any
    content: Any


@cache
def statements(dialect: str) -> Statements:
    log = insert_for(dialect, audit_log).on_conflict_do_nothing(
        index_elements=["chain_id", "seq", "ts"]
    ).returning(audit_log.c.chain_id, audit_log.c.seq)
    daily = insert_for(dialect, audit_daily)
    daily = daily.on_conflict_do_update(
        index_elements=DAILY_KEY,
        set_={
            **{c: audit_daily.c[c] + daily.excluded[c] for c in (*COUNTERS, *SUMS)},
            "tenant": daily.excluded.tenant,
            "zone": daily.excluded.zone,
        },
    )
    latency = insert_for(dialect, audit_latency)
    latency = latency.on_conflict_do_update(
        index_elements=LATENCY_KEY,
        set_={"count": audit_latency.c.count + latency.excluded["count"]},
    )
    load = insert_for(dialect, backend_load_minutes)
    load = load.on_conflict_do_update(
        index_elements=["backend", "minute"],
        set_={c: backend_load_minutes.c[c] + load.excluded[c] for c in LOAD_COUNTERS},
    )
    sizes = insert_for(dialect, audit_token_sizes)
    sizes = sizes.on_conflict_do_update(
        index_elements=SIZE_KEY,
        set_={"count": audit_token_sizes.c.count + sizes.excluded["count"]},
    )
    heads = insert_for(dialect, audit_chains)
    heads = heads.on_conflict_do_update(
        index_elements=["chain_id"],
        set_={"seq": heads.excluded.seq, "row_hash": heads.excluded.row_hash,
              "updated_at": heads.excluded.updated_at},
        where=audit_chains.c.seq < heads.excluded.seq,
    )
    return Statements(
        log=log, daily=daily, latency=latency,
        busy=insert_for(dialect, backend_busy_minutes).on_conflict_do_nothing(),
        load=load, sizes=sizes, heads=heads,
        content=insert_for(dialect, audit_content).on_conflict_do_nothing(),
    )


class AuditRepository:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def insert(self, rows: list[Row]) -> int:
        """Store chained rows; returns how many were new."""
        if not rows:
            return 0
        async with self._engine.begin() as conn:
            return await insert_rows(conn, rows)

    async def chain_head(self, chain_id: str) -> tuple[int, str] | None:
        async with self._engine.connect() as conn:
            found = (await conn.execute(
                select(audit_chains.c.seq, audit_chains.c.row_hash)
                .where(audit_chains.c.chain_id == chain_id)
            )).first()
        return (found.seq, found.row_hash) if found else None


async def insert_rows(conn: AsyncConnection, rows: list[Row]) -> int:
    params = [_db_row(row) for row in rows]
    if conn.dialect.name == "postgresql":
        found = await bulk_insert(conn, audit_log, params, (
            "ON CONFLICT (chain_id, seq, ts) DO NOTHING RETURNING chain_id, seq"
        ))
    else:
        found = await conn.execute(statements(conn.dialect.name).log, params)
    inserted = {(r.chain_id, r.seq) for r in found}
    new = [row for row in rows if (row["chain_id"], row["seq"]) in inserted]
    if new:
        await _add_rollups(conn, new)
        await _advance_heads(conn, new)
        contents = [
            {"request_id": row["request_id"], "ts": ts_datetime(row["ts"]),
             "tenant_id": row["tenant_id"], **row[CONTENT]}
            for row in new if row.get(CONTENT)
        ]
        if contents:
            await conn.execute(statements(conn.dialect.name).content, contents)
    return len(new)


def _db_row(row: Row) -> Row:
    """The audit_log columns: the row with its timestamp as a datetime, without content.
    One copy (the journal and the retry queue still hold the row as it was)."""
    stored = dict(row)
    stored["ts"] = ts_datetime(row["ts"])
    stored.pop(CONTENT, None)
    return stored


async def _add_rollups(conn: AsyncConnection, rows: list[Row]) -> None:
    folded = rollup(rows)
    if conn.dialect.name == "postgresql":
        await _add_rollups_bulk(conn, folded)
        return
    upserts = statements(conn.dialect.name)
    await conn.execute(upserts.daily, [
        {"day": day, "tenant_id": tenant, "requested_model": model, "backend": backend,
         "rule": rule, **values}
        for (day, tenant, model, backend, rule), values in folded.daily.items()
    ])
    if folded.latency:
        await conn.execute(upserts.latency, [
            {"day": day, "tenant_id": tenant, "backend": backend, "metric": metric,
             "bucket": bucket, "count": count}
            for (day, tenant, backend, metric, bucket), count in folded.latency.items()
        ])
    if folded.busy:
        await conn.execute(upserts.busy, [{"backend": b, "minute": m} for b, m in folded.busy])
    if folded.load:
        await conn.execute(upserts.load, _load_rows(folded))
    if folded.sizes:
        await conn.execute(upserts.sizes, _size_rows(folded))


LOAD_COUNTERS = ["requests", "request_s", "completion_tokens"]
SIZE_KEY = ["day", "backend", "metric", "bucket"]


def _load_rows(folded: Rollup) -> list[dict[str, Any]]:
    return [{"backend": b, "minute": m, "requests": int(n), "request_s": s,
             "completion_tokens": int(t)} for (b, m), (n, s, t) in folded.load.items()]


def _size_rows(folded: Rollup) -> list[dict[str, Any]]:
    return [{"day": d, "backend": b, "metric": m, "bucket": k, "count": n}
            for (d, b, m, k), n in folded.sizes.items()]


async def _advance_heads(conn: AsyncConnection, rows: list[Row]) -> None:
    heads: dict[str, Row] = {}
    for row in rows:
        if row["seq"] > heads.get(row["chain_id"], {"seq": 0})["seq"]:
            heads[row["chain_id"]] = row
    now = datetime.now(UTC)
    await conn.execute(statements(conn.dialect.name).heads, [
        {"chain_id": c, "seq": r["seq"], "row_hash": r["row_hash"], "updated_at": now}
        for c, r in heads.items()
    ])


DAILY_KEY = ["day", "tenant_id", "requested_model", "backend", "rule"]
LATENCY_KEY = ["day", "tenant_id", "backend", "metric", "bucket"]


async def _add_rollups_bulk(conn: AsyncConnection, folded: Rollup) -> None:
    await bulk_insert(conn, audit_daily, [
        {"day": day, "tenant_id": tenant, "requested_model": model, "backend": backend,
         "rule": rule, **values}
        for (day, tenant, model, backend, rule), values in folded.daily.items()
    ], add_on_conflict(DAILY_KEY, [*COUNTERS, *SUMS], "audit_daily").replace(
        "DO UPDATE SET ", "DO UPDATE SET tenant = EXCLUDED.tenant, zone = EXCLUDED.zone, ", 1
    ))
    if folded.latency:
        await bulk_insert(conn, audit_latency, [
            {"day": day, "tenant_id": tenant, "backend": backend, "metric": metric,
             "bucket": bucket, "count": count}
            for (day, tenant, backend, metric, bucket), count in folded.latency.items()
        ], add_on_conflict(LATENCY_KEY, ["count"], "audit_latency"))
    if folded.busy:
        await bulk_insert(conn, backend_busy_minutes,
                          [{"backend": b, "minute": m} for b, m in folded.busy],
                          "ON CONFLICT DO NOTHING")
    if folded.load:
        await bulk_insert(conn, backend_load_minutes, _load_rows(folded), add_on_conflict(
            ["backend", "minute"], LOAD_COUNTERS, "backend_load_minutes"))
    if folded.sizes:
        await bulk_insert(conn, audit_token_sizes, _size_rows(folded),
                          add_on_conflict(SIZE_KEY, ["count"], "audit_token_sizes"))
