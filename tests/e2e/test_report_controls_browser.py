"""The report page's range presets and tenant picker in a real headless Chromium: reached
through the login form with the range kept, driven with the keyboard alone, no script on the
page and no console errors."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.e2e.conftest import ADMIN_KEY, Gateway
from tests.e2e.test_report_page_browser import Page, browser

__all__ = ["browser"]


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.tab.url).query, keep_blank_values=True)


def test_the_range_survives_login_and_the_controls_work_from_the_keyboard(
    gw: Gateway, browser: Any
) -> None:
    page = Page(browser)  # no bearer token: a browser that must sign in
    try:
        page.tab.goto(f"{gw.url}/admin/reports?range=7d&tenant=acme")
        assert urlsplit(page.tab.url).path == "/admin/login"
        page.tab.fill("#key", ADMIN_KEY)
        page.tab.keyboard.press("Enter")
        page.tab.wait_for_url("**/admin/reports?*")
        assert query(page) == {"range": ["7d"], "tenant": ["acme"]}
        assert page.tab.is_checked("#range-7d")
        assert page.tab.input_value("#tenant") == "acme"
        assert "tenant acme" in page.tab.inner_text(".meta")
        assert page.tab.locator("script").count() == 0

        # Keyboard only: arrows move along the presets, the picker, then Enter on Show.
        page.tab.focus("#range-7d")
        page.tab.keyboard.press("ArrowRight")
        assert page.tab.is_checked("#range-30d")
        page.tab.focus("#tenant")
        page.tab.keyboard.press("ArrowUp")  # from acme to "All tenants"
        assert page.tab.input_value("#tenant") == ""
        page.tab.keyboard.press("Tab")
        assert page.tab.evaluate("document.activeElement.textContent") == "Show"
        with page.tab.expect_navigation():
            page.tab.keyboard.press("Enter")
        assert query(page)["range"] == ["30d"] and query(page)["tenant"] == [""]
        assert page.tab.is_checked("#range-30d")
        assert "all tenants" in page.tab.inner_text(".meta")
        # 30 days back from now touch 31 UTC days: the page shows them whole.
        assert "(UTC, 31 days)" in page.tab.inner_text(".meta")

        # Custom days: the last radio, two days typed in, Enter in a field submits.
        page.tab.focus("#range-30d")
        page.tab.keyboard.press("ArrowRight")
        assert page.tab.is_checked("#range-custom")
        page.tab.fill("#since", "2026-11-02")
        page.tab.fill("#until", "2026-11-04")
        page.tab.focus("#until")
        with page.tab.expect_navigation():
            page.tab.keyboard.press("Enter")
        assert query(page)["range"] == ["custom"]
        assert page.tab.is_checked("#range-custom")
        assert page.tab.inner_text(".meta").startswith("2026-11-02 to 2026-11-04 (UTC, 3 days)")
        assert page.problems == []
    finally:
        page.close()
