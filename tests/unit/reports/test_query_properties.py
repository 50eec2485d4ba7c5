"""Property tests for what a report request carries in its query string: the audit cursor,
the period bounds and the page limit parse to a usable value or to a 400 naming the
parameter, whatever the text."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.audit.records import ts_datetime, ts_micros
from gateway.errors import InvalidRequest
from gateway.reports.audit_rows import MAX_LIMIT, Cursor, check_limit
from gateway.reports.periods import parse_period

NOW = datetime(2026, 11, 17, 12, 30, tzinfo=UTC)
BIGINT = 2**63 - 1  # audit_log.seq

moments = st.datetimes(timezones=st.just(UTC))
cursors = st.builds(Cursor, moments.map(ts_micros), st.text(max_size=48),
                    st.integers(0, BIGINT))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4), max_leaves=5)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@given(cursors)
def test_a_cursor_handed_out_comes_back_the_same(cursor: Cursor) -> None:
    assert Cursor.decode(cursor.encode()) == cursor


@settings(max_examples=400)
@given(st.text(max_size=40) | st.binary(max_size=40).map(b64)
       | json_values.map(lambda v: b64(orjson.dumps(v)))
       | st.tuples(st.integers(-(2**63), 2**64 - 1), st.text(max_size=4) | st.integers(0, 9),
                   st.integers(-(2**63), 2**64 - 1) | st.booleans()).map(
           lambda t: b64(orjson.dumps(list(t)))))
def test_any_cursor_text_is_a_usable_cursor_or_a_400(text: str) -> None:
    try:
        cursor = Cursor.decode(text)
    except InvalidRequest as exc:
        assert exc.status == 400 and exc.param == "cursor"
        return
    # What the keyset query then does with it: a datetime bound and a BIGINT comparison.
    ts_datetime(cursor.ts_us)
    assert type(cursor.seq) is int and -(2**63) <= cursor.seq <= BIGINT
    assert type(cursor.ts_us) is int and isinstance(cursor.chain_id, str)


digits = st.text(alphabet="0123456789", min_size=1, max_size=8)
bounds = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["now", "today", " Today ", "", "9999-12-31", "0001-01-01",
                     "9999-12-31T23:59:59", "0001-01-01T00:00:00+01:00",
                     "9999-12-31T23:00:00-05:00"]),
    st.tuples(digits, st.sampled_from("mhdw")).map("".join),
    st.datetimes(timezones=st.none() | st.sampled_from(
        [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])).map(
        lambda d: d.isoformat()),
    st.dates().map(lambda d: d.isoformat()),
)


@settings(max_examples=500)
@given(st.none() | bounds, st.none() | bounds)
def test_any_period_text_is_a_usable_period_or_a_400(
    since: str | None, until: str | None
) -> None:
    try:
        period = parse_period(since, until, NOW)
    except InvalidRequest as exc:
        assert exc.status == 400 and exc.param in ("since", "until")
        return
    assert period.since < period.until
    assert period.since.utcoffset() == timedelta(0) == period.until.utcoffset()
    # The rollup reports widen it to whole days, and the audit log compares microseconds.
    first, last = period.day_bounds()
    assert first <= period.since < period.until <= last
    ts_micros(period.since), ts_micros(period.until)


@given(st.integers())
def test_a_limit_is_itself_or_a_400(limit: int) -> None:
    if 1 <= limit <= MAX_LIMIT:
        assert check_limit(limit) == limit
    else:
        with pytest.raises(InvalidRequest):
            check_limit(limit)
