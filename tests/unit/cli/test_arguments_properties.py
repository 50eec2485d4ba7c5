"""Property tests for the audit commands' time arguments: any text is a moment or a usage
error click can print, never a traceback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.cli.audit_commands import parse_cutoff

NOW = datetime(2026, 11, 17, 12, 0, tzinfo=UTC)
ages = st.tuples(st.text(alphabet="0123456789", min_size=1, max_size=12),
                 st.sampled_from("dw")).map("".join)
texts = (st.text(max_size=30) | ages
         | st.datetimes(timezones=st.none() | st.just(UTC)).map(lambda d: d.isoformat())
         | st.dates().map(lambda d: d.isoformat()))


@settings(max_examples=300)
@given(texts)
def test_any_cutoff_is_an_aware_moment_or_a_usage_error(text: str) -> None:
    try:
        moment = parse_cutoff(text, NOW)
    except click.BadParameter as exc:
        assert text in exc.message or repr(text) in exc.message
        return
    assert moment.tzinfo is not None


@given(st.integers(0, 100_000), st.sampled_from("dw"))  # back to about year 110
def test_an_age_counts_back_from_now(count: int, unit: str) -> None:
    days = count * (7 if unit == "w" else 1)
    assert parse_cutoff(f"{count}{unit}", NOW) == NOW - timedelta(days=days)
