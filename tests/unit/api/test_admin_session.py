"""The report page's session cookie: an expiry and its HMAC under the admin key, so it
expires, cannot be forged or extended, and dies with a rotated key; and a login only ever
sends the browser on to the report page."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.api.admin_session import SESSION_S, _safe_target, session_value, valid_session

KEY = "sk-admin-test"
NOW = 1_795_000_000.0


def test_a_fresh_session_is_valid_until_it_expires() -> None:
    value = session_value(KEY, NOW)
    assert valid_session(value, KEY, NOW)
    assert valid_session(value, KEY, NOW + SESSION_S - 1)
    assert not valid_session(value, KEY, NOW + SESSION_S + 1)


def test_a_rotated_admin_key_ends_every_session() -> None:
    assert not valid_session(session_value(KEY, NOW), "sk-admin-rotated", NOW)
    assert not valid_session(session_value(KEY, NOW), None, NOW)


def test_a_later_expiry_cannot_be_written_in() -> None:
    expires, _, mac = session_value(KEY, NOW).partition(".")
    assert not valid_session(f"{int(expires) + 86400}.{mac}", KEY, NOW)


@given(st.text(max_size=80))
def test_no_made_up_value_is_a_session(value: str) -> None:
    assert not valid_session(value, KEY, NOW)


@pytest.mark.parametrize(("asked", "sent_to"), [
    (None, "/admin/reports"),
    ("/admin/reports?since=7d&tenant=acme", "/admin/reports?since=7d&tenant=acme"),
    ("https://evil.example/admin/reports", "/admin/reports"),
    ("//evil.example/x", "/admin/reports"),
    ("/admin/reports//evil.example", "/admin/reports"),
    ("/admin/tenants", "/admin/reports"),
])
def test_a_login_leads_only_to_the_report_page(asked: str | None, sent_to: str) -> None:
    assert _safe_target(asked) == sent_to


def test_a_forged_expiry_too_long_for_int_is_no_session_not_an_error() -> None:
    _, _, mac = session_value(KEY, NOW).partition(".")
    assert not valid_session("9" * 4301 + "." + mac, KEY, NOW)
    assert not valid_session("9" * 17 + "." + mac, KEY, NOW)
