"""`--since` / `--until` as every command takes them: one syntax, one meaning, one help text.

An ISO date (2026-11-01: as --until, the end of that day), an ISO datetime (UTC unless it
says otherwise), 'now', 'today', or an age before now: 30m, 24h, 7d, 2w.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from gateway.errors import InvalidRequest
from gateway.reports.periods import Period, parse_instant, parse_period

SYNTAX = "an ISO date or datetime (UTC), 'today', or an age such as 30m, 24h, 7d, 2w"


def since_option(default_text: str = "a week before --until") -> Any:
    return click.option("--since", default=None,
                        help=f"start (inclusive): {SYNTAX} (default: {default_text})")


def until_option(default_text: str = "now") -> Any:
    return click.option("--until", default=None,
                        help=f"end (exclusive), as --since; a bare date means the end of that "
                        f"day (default: {default_text})")


def period(since: str | None, until: str | None, now: datetime | None = None) -> Period:
    """Both bounds, defaults filled in (until now, since a week before)."""
    try:
        return parse_period(since, until, now or datetime.now(UTC))
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.param}") from None


def instant(text: str, *, end: bool, param: str, now: datetime | None = None) -> datetime:
    """One bound alone (a bare date: its start, or as an end its end)."""
    try:
        return parse_instant(text, now or datetime.now(UTC), end=end, param=param)
    except InvalidRequest as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{param}") from None
