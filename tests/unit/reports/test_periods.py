"""--since / --until: dates, datetimes and ages, in UTC, and the whole days rollups cover."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.errors import InvalidRequest
from gateway.reports.periods import Period, parse_instant, parse_period

NOW = datetime(2026, 11, 22, 15, 30, 0, tzinfo=UTC)


def test_defaults_to_the_week_before_now() -> None:
    assert parse_period(None, None, NOW) == Period(NOW - timedelta(days=7), NOW)


@pytest.mark.parametrize(("text", "age"), [
    ("30m", timedelta(minutes=30)), ("24h", timedelta(hours=24)), ("7d", timedelta(days=7)),
    ("2w", timedelta(weeks=2)), ("0d", timedelta()),
])
def test_ages_count_back_from_now(text: str, age: timedelta) -> None:
    assert parse_instant(text, NOW, end=False, param="since") == NOW - age


def test_a_bare_date_is_a_whole_day() -> None:
    period = parse_period("2026-11-01", "2026-11-30", NOW)
    assert period.since == datetime(2026, 11, 1, tzinfo=UTC)
    assert period.until == datetime(2026, 12, 1, tzinfo=UTC)  # all of the 30th
    assert period.days() == (date(2026, 11, 1), date(2026, 11, 30))


def test_datetimes_are_utc_whatever_zone_they_are_written_in() -> None:
    naive = parse_instant("2026-11-17T08:00:00", NOW, end=False, param="since")
    zulu = parse_instant("2026-11-17T08:00:00Z", NOW, end=False, param="since")
    paris = parse_instant("2026-11-17T09:00:00+01:00", NOW, end=False, param="since")
    assert naive == zulu == paris == datetime(2026, 11, 17, 8, tzinfo=UTC)
    assert paris.tzinfo is UTC


def test_today_and_now() -> None:
    assert parse_period("today", "now", NOW) == Period(datetime(2026, 11, 22, tzinfo=UTC), NOW)
    assert parse_instant("today", NOW, end=True, param="until") == datetime(2026, 11, 23,
                                                                            tzinfo=UTC)


def test_partial_days_widen_to_whole_days_for_the_rollups() -> None:
    period = Period(datetime(2026, 11, 17, 8, tzinfo=UTC), datetime(2026, 11, 18, 0, tzinfo=UTC))
    assert period.days() == (date(2026, 11, 17), date(2026, 11, 17))  # until is exclusive
    assert period.day_bounds() == (datetime(2026, 11, 17, tzinfo=UTC),
                                   datetime(2026, 11, 18, tzinfo=UTC))


@pytest.mark.parametrize("text", ["yesterday", "7x", "2026-13-01", "2026-11-17T25:00", "-3d", " "])
def test_nonsense_names_the_parameter(text: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_period(text, None, NOW)
    assert caught.value.param == "since"


def test_since_must_come_before_until() -> None:
    with pytest.raises(InvalidRequest, match="must be before"):
        parse_period("2026-11-20", "2026-11-19T00:00:00", NOW)


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))])))
def test_any_iso_datetime_round_trips(moment: datetime) -> None:
    parsed = parse_instant(moment.isoformat(), NOW, end=False, param="since")
    assert parsed == moment and parsed.tzinfo is UTC
