"""The report page's session through the real server: logout ends it server-side (a saved
copy of the cookie stops working), login and logout refuse cross-site posts, and a forged
cookie with an absurd expiry is a 401 like any other, with its request id."""

from __future__ import annotations

import httpx

from gateway.api.admin_session import COOKIE
from tests.e2e.conftest import ADMIN_KEY, Gateway

EVIL = {"origin": "https://evil.example"}


def signed_in(gw: Gateway, **headers: str) -> str:
    with httpx.Client(base_url=gw.url, timeout=10) as browser:
        login = browser.post("/admin/login", data={"key": ADMIN_KEY}, headers=headers)
        assert login.status_code == 303, login.text
        return browser.cookies[COOKIE]


def report_status(gw: Gateway, cookie: str) -> int:
    return httpx.get(f"{gw.url}/admin/reports", cookies={COOKIE: cookie},
                     timeout=30).status_code


def test_logout_ends_the_session_server_side_so_a_saved_cookie_stops_working(
    gw: Gateway,
) -> None:
    own_page = {"origin": gw.url}
    saved = signed_in(gw, **own_page)
    assert report_status(gw, saved) == 200
    out = httpx.post(f"{gw.url}/admin/logout", cookies={COOKIE: saved}, headers=own_page,
                     timeout=10)
    assert out.status_code == 303
    assert report_status(gw, saved) == 401  # the copy kept from before the logout
    assert report_status(gw, signed_in(gw)) == 200  # a new sign-in works


def test_cross_site_login_and_logout_are_refused(gw: Gateway) -> None:
    login = httpx.post(f"{gw.url}/admin/login", data={"key": ADMIN_KEY}, headers=EVIL,
                       timeout=10)
    assert login.status_code == 403 and "set-cookie" not in login.headers
    session = signed_in(gw)
    for headers in (EVIL, {"referer": "https://evil.example/page"}, {"origin": "null"},
                    {"sec-fetch-site": "cross-site", "origin": gw.url}):
        out = httpx.post(f"{gw.url}/admin/logout", cookies={COOKIE: session}, headers=headers,
                         timeout=10)
        assert out.status_code == 403
    assert report_status(gw, session) == 200  # none of them ended it


def test_a_forged_cookie_with_a_4301_digit_expiry_is_a_401(gw: Gateway) -> None:
    reply = httpx.get(f"{gw.url}/admin/reports", cookies={COOKIE: "9" * 4301 + ".forged"},
                      timeout=10)
    assert reply.status_code == 401
    assert reply.headers.get("x-request-id")
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}
