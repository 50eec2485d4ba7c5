"""Postgres bulk statements for the audit write path: a whole batch as one INSERT … SELECT
FROM json_populate_recordset(the table's row type, one JSON array of the rows). A 500-row batch
is one statement with one parameter, instead of 40 per row through the ORM's per-value
processing (about 4× less time per batch, measured in benchmarks/audit.py). The batch was first
sent as one array per column; asyncpg's array encoder then asks an abstract-base-class
`isinstance` of every value (~118 Python-level calls per audit row), which made that encoding
the largest part of the gateway's own CPU per audit row. orjson writes the whole batch in C and
the parsing moves to the database server; the table's own column types convert each value
(exactly: floats in their shortest round-trip form, timestamps to the microsecond, naive ones
as UTC as asyncpg took them), so the stored rows, and so their hashes, are unchanged. A batch
holding a NUL character (only rows written before NULs were replaced; no text column takes one)
still goes as arrays, so the database refuses it in the same words as before."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import JSON, Table, TextClause, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Result
from sqlalchemy.ext.asyncio import AsyncConnection

_DIALECT = postgresql.dialect()
_statements: dict[tuple[str, tuple[str, ...], str], TextClause] = {}
_array_statements: dict[tuple[str, tuple[str, ...], str], TextClause] = {}
_JSON_OPTIONS = orjson.OPT_NAIVE_UTC


def _statement(table: Table, columns: tuple[str, ...], tail: str) -> TextClause:
    key = (table.name, columns, tail)
    found = _statements.get(key)
    if found is None:
        names = ", ".join(columns)
        found = _statements[key] = text(
            f"INSERT INTO {table.name} ({names}) SELECT {names} "
            f"FROM json_populate_recordset(NULL::{table.name}, CAST(:rows AS json)) {tail}"
        )
    return found


async def bulk_insert(
    conn: AsyncConnection, table: Table, rows: list[dict[str, Any]], tail: str
) -> Result[Any]:
    """INSERT every row (all with the same keys); `tail` is the ON CONFLICT / RETURNING."""
    columns = tuple(rows[0])
    batch = orjson.dumps(rows, option=_JSON_OPTIONS)
    if b"\\u0000" in batch:
        return await _insert_arrays(conn, table, columns, rows, tail)
    return await conn.execute(_statement(table, columns, tail), {"rows": batch.decode()})


async def _insert_arrays(conn: AsyncConnection, table: Table, columns: tuple[str, ...],
                         rows: list[dict[str, Any]], tail: str) -> Result[Any]:
    """The batch as one array per column (unnest), sent in binary by asyncpg."""
    key = (table.name, columns, tail)
    statement = _array_statements.get(key)
    if statement is None:
        arrays = ", ".join(
            f"CAST(:c{i} AS {table.c[name].type.compile(dialect=_DIALECT)}[])"
            for i, name in enumerate(columns)
        )
        statement = _array_statements[key] = text(
            f"INSERT INTO {table.name} ({', '.join(columns)}) SELECT * FROM unnest({arrays}) "
            f"{tail}"
        )
    params: dict[str, list[Any]] = {}
    for i, name in enumerate(columns):
        values = [row[name] for row in rows]
        if isinstance(table.c[name].type, JSON):  # asyncpg takes json as text
            values = [None if v is None else orjson.dumps(v).decode() for v in values]
        params[f"c{i}"] = values
    return await conn.execute(statement, params)


def add_on_conflict(keys: list[str], counters: list[str], table: str) -> str:
    """ON CONFLICT clause adding each counter to the stored one."""
    sets = ", ".join(f"{c} = {table}.{c} + EXCLUDED.{c}" for c in counters)
    return f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {sets}"
