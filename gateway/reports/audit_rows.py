"""The audit report: rows of audit_log in a time range, newest first, filtered and paged with
a keyset cursor, so page 1000 costs what page 1 does (an index range scan on
ix_audit_log_tenant_ts or ix_audit_log_ts, never OFFSET). Its query is
audit_log_repository.py's."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import orjson

from gateway.audit.records import Row, ts_datetime
from gateway.errors import InvalidRequest
from gateway.reports.periods import Period

MAX_LIMIT = 10_000
DEFAULT_LIMIT = 100


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the previous page stopped: the last row's (ts, chain_id, seq), its sort key."""

    ts_us: int
    chain_id: str
    seq: int

    def encode(self) -> str:
        raw = orjson.dumps([self.ts_us, self.chain_id, self.seq])
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            ts_us, chain_id, seq = orjson.loads(raw)
            # Exact types and ranges: a bool is no int, and the query needs a datetime and a
            # BIGINT out of them (an edited cursor must be a 400, not a failed query).
            if not (type(ts_us) is int and isinstance(chain_id, str) and type(seq) is int
                    and 0 <= seq < 2**63):
                raise ValueError(text)
            ts_datetime(ts_us)
        except (binascii.Error, orjson.JSONDecodeError, ValueError, TypeError, OverflowError):
            raise InvalidRequest("cursor is not one this report handed out",
                                 param="cursor") from None
        return cls(ts_us, chain_id, seq)


@dataclass(frozen=True, slots=True)
class AuditQuery:
    period: Period  # exact, to the microsecond: the log keeps every row's time
    tenant_id: str | None = None
    backend: str | None = None
    model: str | None = None  # the model the client asked for
    rule: str | None = None
    outcome: str | None = None
    limit: int = DEFAULT_LIMIT
    cursor: Cursor | None = None


@dataclass(frozen=True, slots=True)
class AuditPage:
    rows: list[Row]  # canonical rows (records.from_db), newest first
    next_cursor: Cursor | None  # None on the last page


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest(f"limit must be between 1 and {MAX_LIMIT}", param="limit")
    return limit
