"""The time range of a report: `--since` / `--until` as ISO dates, ISO datetimes or relative
ages (`7d`, `24h`), always in UTC, and the whole UTC days the daily rollups can answer for."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from gateway.errors import InvalidRequest

DEFAULT_SPAN = timedelta(days=7)
_RELATIVE = re.compile(r"^(\d{1,6})([mhdw])$")
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1),
          "w": timedelta(weeks=1)}
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# What a datetime holds, less room for the default span before `until` and for the rollup
# reports to widen a range to the end of its last day.
_EARLIEST = datetime.min.replace(tzinfo=UTC) + DEFAULT_SPAN
_LATEST = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Period:
    """Half-open: since <= ts < until, both aware UTC datetimes."""

    since: datetime
    until: datetime

    def days(self) -> tuple[date, date]:
        """First and last UTC day (inclusive) touched by the range: the rollups keep whole
        days, so a report read from them covers every day the range reaches into."""
        return self.since.date(), (self.until - timedelta(microseconds=1)).date()

    def day_bounds(self) -> tuple[datetime, datetime]:
        """The range widened to whole UTC days, as the rollup reports actually cover it."""
        first, last = self.days()
        return _midnight(first), _midnight(last + timedelta(days=1))


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), UTC)


def parse_instant(text: str, now: datetime, *, end: bool, param: str) -> datetime:
    """One bound. A bare date is a whole day: as `until` it means the end of that day, so
    `--since 2026-11-01 --until 2026-11-30` covers all of November."""
    try:
        moment = _instant(text, now, end=end, param=param)
    except OverflowError:  # past what a datetime holds: "999999w", or until 9999-12-31
        raise _invalid(text, param) from None
    if not _EARLIEST <= moment <= _LATEST:
        raise _invalid(text, param)
    return moment


def _instant(text: str, now: datetime, *, end: bool, param: str) -> datetime:
    value = text.strip().lower()
    if value == "now":
        return now
    if value == "today":
        start = _midnight(now.date())
        return start + timedelta(days=1) if end else start
    relative = _RELATIVE.match(value)
    if relative:
        return now - int(relative.group(1)) * _UNITS[relative.group(2)]
    if _DAY.match(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise _invalid(text, param) from None
        return _midnight(day + timedelta(days=1) if end else day)
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise _invalid(text, param) from None
    # Naive times are UTC: reports never depend on the machine's time zone.
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_period(since: str | None, until: str | None, now: datetime) -> Period:
    """Defaults: until now, since a week before until."""
    now = now.astimezone(UTC)
    end = parse_instant(until, now, end=True, param="until") if until else now
    start = parse_instant(since, now, end=False, param="since") if since else end - DEFAULT_SPAN
    if start >= end:
        raise InvalidRequest(
            f"since ({start.isoformat()}) must be before until ({end.isoformat()})",
            param="since",
        )
    return Period(start, end)


def _invalid(text: str, param: str) -> InvalidRequest:
    return InvalidRequest(
        f"{param}={text!r} is not a time: use an ISO date (2026-11-17), an ISO datetime "
        "(2026-11-17T08:00:00Z), 'now', 'today', or an age such as 30m, 24h, 7d or 2w",
        param=param,
    )


def page_days(
    since: str | None, until: str | None, now: datetime
) -> tuple[date | None, date | None]:
    """The first and last UTC day a page of whole days shows, for bounds in the syntax every
    report takes (None where not given: the page's defaults apply)."""
    first = parse_instant(since, now, end=False, param="since").date() if since else None
    last = None
    if until:
        # the day holding the last instant of the (exclusive) range
        last = (parse_instant(until, now, end=True, param="until")
                - timedelta(microseconds=1)).date()
    return first, last
