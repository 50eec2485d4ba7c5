"""Wrong admin keys are throttled through the real server: after a few, the admin API answers
an OpenAI-shaped 429 with Retry-After and the login form a 429 page, without comparing the
key; once the wait is over the right key gets in; every refusal is counted."""

from __future__ import annotations

import time

import httpx

from gateway.tenancy.login_throttle import FREE_FAILURES
from tests.e2e.conftest import ADMIN_KEY, Gateway


def test_wrong_keys_at_the_admin_api_get_a_429_then_the_right_key_gets_in(gw: Gateway) -> None:
    wrong = {"authorization": f"Bearer {ADMIN_KEY}-not"}
    with httpx.Client(base_url=gw.url, timeout=10) as client:
        for _ in range(FREE_FAILURES + 1):
            assert client.get("/admin/tenants", headers=wrong).status_code == 401
        right = {"authorization": f"Bearer {ADMIN_KEY}"}
        refused = client.get("/admin/tenants", headers=right)  # not even compared now
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "admin_login_throttled" and error["type"] == "rate_limit_error"
        assert set(error) == {"message", "type", "param", "code"}
        assert int(refused.headers["retry-after"]) >= 1
        assert refused.headers.get("x-request-id")
        time.sleep(int(refused.headers["retry-after"]))
        assert client.get("/admin/tenants", headers=right).status_code == 200
        scrape = client.get("/metrics", headers=right).text
    assert 'gateway_admin_auth_failures_total{outcome="throttled"}' in scrape
    assert 'gateway_admin_auth_failures_total{outcome="wrong_key"}' in scrape


def test_wrong_keys_at_the_login_form_get_a_429_page(gw: Gateway) -> None:
    with httpx.Client(base_url=gw.url, timeout=10) as browser:
        for _ in range(FREE_FAILURES + 1):
            assert browser.post("/admin/login", data={"key": "guess"}).status_code == 401
        refused = browser.post("/admin/login", data={"key": ADMIN_KEY})
        assert refused.status_code == 429
        assert "Too many wrong keys" in refused.text and "set-cookie" not in refused.headers
        time.sleep(int(refused.headers["retry-after"]))
        assert browser.post("/admin/login", data={"key": ADMIN_KEY}).status_code == 303
