"""A browser's way into the report page: the login form trades the admin key for a session
cookie that opens the report page and nothing else; API clients keep the bearer key."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import ADMIN_KEY, Gateway

BROWSER = {"accept": "text/html,application/xhtml+xml"}


def test_a_browser_without_a_session_is_sent_to_the_login_form(gw: Gateway) -> None:
    reply = httpx.get(f"{gw.url}/admin/reports?since=7d", headers=BROWSER, timeout=10)
    assert reply.status_code == 303
    assert reply.headers["location"] == "/admin/login?next=%2Fadmin%2Freports%3Fsince%3D7d"
    form = httpx.get(f"{gw.url}{reply.headers['location']}", timeout=10)
    assert form.status_code == 200 and 'type="password"' in form.text
    assert 'value="/admin/reports?since=7d"' in form.text
    assert "form-action 'self'" in form.headers["content-security-policy"]


def test_an_api_client_still_gets_an_openai_shaped_401(gw: Gateway) -> None:
    reply = httpx.get(f"{gw.url}/admin/reports", timeout=10)
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "missing_api_key"


def test_the_wrong_key_is_refused_on_the_form(gw: Gateway) -> None:
    reply = httpx.post(f"{gw.url}/admin/login", data={"key": "not-it"}, timeout=10)
    assert reply.status_code == 401
    assert "That is not the admin key" in reply.text and "set-cookie" not in reply.headers


def test_the_admin_key_buys_a_cookie_that_opens_the_report_page_only(gw: Gateway) -> None:
    with httpx.Client(base_url=gw.url, timeout=10) as browser:
        login = browser.post("/admin/login", data={"key": ADMIN_KEY,
                                                   "next": "/admin/reports?since=1d"})
        assert login.status_code == 303 and login.headers["location"] == "/admin/reports?since=1d"
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/admin" in cookie
        assert ADMIN_KEY.lower() not in cookie
        page = browser.get("/admin/reports", headers=BROWSER)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        # The session is for reading the page: the admin API still wants the key itself.
        assert browser.get("/admin/tenants").status_code == 401
        out = browser.post("/admin/logout")
        assert out.status_code == 303
        assert browser.get("/admin/reports", headers=BROWSER).status_code == 303
