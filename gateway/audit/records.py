"""Audit rows as plain dicts in one canonical form, and the hash chain that links them.

A row is what `audit_log` stores, with `ts` as integer microseconds since the epoch (exact in
Postgres, SQLite and JSON alike). Its hash covers every field but itself, serialised with
sorted keys, so the same row read back from any of those stores hashes the same. Each writer
process keeps its own chain (one id per process life), which needs no coordination between
replicas; the rows of a chain are numbered without gaps.

Every value is made to fit its column before the row is hashed (see `fit_row`): the strings
come from clients and upstreams, and a value the database refuses would otherwise hold its
batch, and every batch spooled behind it, out of the log.
"""

from __future__ import annotations

import hashlib
import math
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import JSON, BigInteger, Float, Integer, SmallInteger, String

from gateway.db.audit_tables import audit_log
from gateway.types import AuditEvent, PredictionNote

Row = dict[str, Any]

GENESIS = "0" * 64  # prev_hash of a chain's first row
CHAIN_FIELDS = ("chain_id", "seq", "prev_hash", "row_hash")
# Opted-in redacted prompt and answer travel with the row (through queue and spool) but are
# stored in audit_content and are not part of the row's hash.
CONTENT = "content"

# Postgres refuses NUL in text and json values; U+FFFD says "a character was here".
NUL, NUL_STANDIN = "\x00", "\ufffd"
INT64 = (-(2**63), 2**63 - 1)
_INT_RANGES = {SmallInteger: (-(2**15), 2**15 - 1), Integer: (-(2**31), 2**31 - 1),
               BigInteger: INT64}


# Each audit_log column by what it needs checked: the schema is the one truth.
_STRINGS = [(c.name, c.type.length) for c in audit_log.columns if isinstance(c.type, String)]
_INTS = [(c.name, *_INT_RANGES[type(c.type)]) for c in audit_log.columns
         if type(c.type) in _INT_RANGES]
_FLOATS = [(c.name, c.nullable) for c in audit_log.columns if isinstance(c.type, Float)]
_JSONS = [c.name for c in audit_log.columns if isinstance(c.type, JSON)]


def new_chain_id() -> str:
    """Unique per writer process life: host, pid and start time (ms)."""
    host = socket.gethostname()[:24]
    return f"{host}:{os.getpid()}:{int(time.time() * 1000):x}"


def event_row(event: AuditEvent) -> Row:
    """The audit_log columns for one request (without the chain fields)."""
    trace: dict[str, Any] = {}
    if event.rejected:
        trace["rejected"] = [[r.backend, r.reason] for r in event.rejected]
    if len(event.tried) > 1:
        trace["tried"] = list(event.tried)
    if event.failures:
        trace["failed"] = list(event.failures)  # why: the failover's reasons, in order
    if event.telemetry is not None:
        note = event.telemetry
        trace["telemetry"] = {
            k: v for k, v in (
                ("running", note.running), ("waiting", note.waiting),
                ("kv_usage", note.kv_usage), ("prefix_hit_rate", note.prefix_hit_rate),
                ("in_flight", note.in_flight), ("age_s", note.age_s),
            ) if v is not None
        }
        if note.prediction is not None:
            # What the predicted TTFT (predicted_ttft_s) was computed from.
            trace["telemetry"]["prediction"] = _prediction_fields(note.prediction)
    if event.slo_miss is not None:
        trace["slo_miss"] = event.slo_miss  # the rule's TTFT target could not be promised
    if event.sensitive_types:
        trace["types"] = list(event.sensitive_types)
    if event.approval is not None:
        trace["approval"] = event.approval  # in the trace, as `task`: old rows hash the same
    if event.task is not None:
        # In the trace rather than a column of its own: rows written before it hash the same.
        trace["task"] = event.task
    if event.load_rejected:
        trace["load"] = list(event.load_rejected)  # set aside for their load: replay's fleet
    if event.entry_point is not None:
        # The API called (messages, responses: `endpoint` says chat for both). In the trace,
        # so the row hash covers it and rows written before it hash as they did.
        trace["api"] = event.entry_point
    if event.task_p is not None:
        trace["task_p"] = round(event.task_p, 4)  # what a `task_p` rule reads on replay
    row: Row = {
        "ts": round(event.ts_unix_s * 1_000_000),
        "request_id": event.request_id,
        "tenant_id": event.tenant_id,
        "tenant": event.tenant_name,
        "key_id": event.key_id,
        "endpoint": event.endpoint,
        "requested_model": event.requested_model,
        "backend": event.backend,
        "upstream_model": event.upstream_model,
        "zone": event.zone,
        "rule": event.rule,
        "status": event.status,
        "outcome": event.outcome,
        "error_type": event.error_type,
        "stream": event.stream,
        "prompt_tokens": event.prompt_tokens,
        "completion_tokens": event.completion_tokens,
        "cached_tokens": event.cached_tokens,
        "max_output_tokens": event.max_output_tokens,
        "prompt_tokens_exact": event.prompt_tokens_exact,
        "complexity": event.complexity,
        "p_strong": None if event.p_strong is None else round(event.p_strong, 6),
        "sensitivity": ",".join(event.sensitivity),
        "redacted": event.redacted,
        "tags": ",".join(event.tags),
        "cost_micro_usd": event.cost_micro_usd,
        "baseline_cost_micro_usd": event.baseline_cost_micro_usd,
        "predicted_cost_micro_usd": event.predicted_cost_micro_usd,
        "duration_s": round(event.duration_s, 6),
        "ttft_s": None if event.ttft_s is None else round(event.ttft_s, 6),
        "predicted_ttft_s": (
            None if event.predicted_ttft_s is None else round(event.predicted_ttft_s, 6)
        ),
        "attempts": event.attempts,
        "spill_over": event.spill_over,
        "affinity": event.affinity,
        "unmetered": event.unmetered,
        "over_soft_limit": event.over_soft_limit,
        "trace": trace or None,
    }
    fit_row(row)
    if event.content is not None:
        row[CONTENT] = {"prompt": fit_text(event.content.prompt),
                        "response": fit_text(event.content.response)}
    return row


def _prediction_fields(note: PredictionNote) -> dict[str, Any]:
    """`asdict` of a flat record of scalars, without its recursive deep copy (~10 µs a row)."""
    return {name: getattr(note, name) for name in _PREDICTION_FIELDS}


_PREDICTION_FIELDS = tuple(f.name for f in fields(PredictionNote))


def fit_row(row: Row) -> Row:
    """Make every value one the database stores as it is: NULs replaced, strings cut to their
    column's length (Postgres' bulk insert would cut them silently after hashing: a row that
    verify would then call altered), integers clamped to the column's range, non-finite floats
    turned into NULL (or 0.0 where the column needs a value: SQLite stores NaN as NULL)."""
    # Clean values (nearly all) cost one test each.
    for name, length in _STRINGS:
        text = row.get(name)
        if text.__class__ is str and (len(text) > length or NUL in text or not text.isascii()):
            row[name] = fit_text(text)[:length]
    for name, low, high in _INTS:
        number = row.get(name)
        if number.__class__ is int and not low <= number <= high:
            row[name] = min(max(number, low), high)
    for name, nullable in _FLOATS:
        real = row.get(name)
        if real.__class__ is float and not math.isfinite(real):
            row[name] = None if nullable else 0.0
    for name in _JSONS:
        if row.get(name) is not None and not _json_fits(row[name]):
            row[name] = _fit_json(row[name])
    return row


def _json_fits(value: Any) -> bool:
    """orjson (the hash, the spool, the json column's text) takes it, and it has no NUL."""
    try:
        return b"\\u0000" not in orjson.dumps(value)
    except TypeError:  # an integer past 64 bits, a lone surrogate, a type it cannot write
        return False


def fit_text(value: str) -> str:
    """No NUL, and encodable as UTF-8 (a lone surrogate is replaced)."""
    if NUL in value:
        value = value.replace(NUL, NUL_STANDIN)
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            value = value.encode(errors="replace").decode()
    return value


def _fit_json(value: Any) -> Any:
    """Strings as in text columns, integers within 64 bits (orjson's range: the row hash
    serialises them), non-finite floats as null (what orjson writes for them anyway)."""
    if isinstance(value, str):
        return fit_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return min(max(value, INT64[0]), INT64[1])
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {fit_text(str(k)): _fit_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fit_json(v) for v in value]
    return fit_text(str(value))


def row_hash(row: Row) -> str:
    # A row being linked has neither key yet (nearly every call): hashed without a copy.
    content = row if "row_hash" not in row and CONTENT not in row else {
        k: v for k, v in row.items() if k != "row_hash" and k != CONTENT}
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


class Chain:
    """Links rows in order: each carries its number, the previous row's hash and its own."""

    def __init__(self, chain_id: str, seq: int = 0, head: str = GENESIS) -> None:
        self.chain_id = chain_id
        self.seq = seq  # of the last linked row; 0 before the first
        self.head = head

    def link(self, row: Row) -> Row:
        self.seq += 1
        row["chain_id"], row["seq"], row["prev_hash"] = self.chain_id, self.seq, self.head
        row["row_hash"] = self.head = row_hash(row)
        return row


def to_wire(row: Row) -> bytes:
    return orjson.dumps(row)


def from_wire(data: bytes) -> Row:
    row: Row = orjson.loads(data)
    return row


def ts_datetime(ts_us: int) -> datetime:
    """Exact: integer microseconds → an aware UTC datetime (no float rounding)."""
    seconds, micros = divmod(ts_us, 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micros)


def ts_micros(value: datetime) -> int:
    """The inverse; SQLite hands back naive datetimes, which are UTC here."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_db(record: Mapping[str, Any]) -> Row:
    """A row read from audit_log (`Row._asdict()`) back in canonical form."""
    # Column names arrive as SQLAlchemy's str subclass, which orjson will not take as keys.
    row = {str.__str__(k): v for k, v in record.items()}
    row["ts"] = ts_micros(row["ts"])
    return row
