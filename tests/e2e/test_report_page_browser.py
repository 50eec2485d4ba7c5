"""The report page in a real headless Chromium: requests through the gateway with the openai
SDK, then /admin/reports (and `gateway report html`) rendered with every chart, no console
errors, names from the database shown as text, and a screenshot kept."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import httpx
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.cli.main import cli
from gateway.db.audit_tables import audit_daily
from gateway.db.engine import create_engine
from gateway.db.migrate import upgrade
from gateway.types import AuditEvent
from tests.conftest import REQUIRE
from tests.e2e.conftest import ADMIN_KEY, HELLO_BODY, Gateway
from tests.support.audit_events import make_event

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package: Playwright downloads no browser
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "benchmarks" / "screenshots"
T = TypeVar("T")
EVIL = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
# Backend and rule names are at most 64 characters (the policy schema and the audit columns).
EVIL_NAME = '<script>document.title="pwned"</script>'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


def _elsewhere(work: Callable[[], T]) -> T:
    """Playwright's sync API keeps an event loop running on this thread: the database work
    (and the CLI, which starts its own loop) runs on another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()


def _run(coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return _elsewhere(lambda: asyncio.run(coroutine()))


def _missing(why: str) -> NoReturn:
    if REQUIRE:
        pytest.fail(f"{why}, but GATEWAY_TEST_REQUIRE_SERVICES=1")
    pytest.skip(why)


class Page:
    """A browser tab that remembers every console error, page error and dialog."""

    def __init__(self, browser: Any, headers: dict[str, str] | None = None) -> None:
        self.context = browser.new_context(
            extra_http_headers=headers or {}, viewport={"width": 1200, "height": 900}
        )
        self.tab = self.context.new_page()
        self.problems: list[str] = []
        self.tab.on("console", lambda m: m.type == "error" and self.problems.append(m.text))
        self.tab.on("pageerror", lambda e: self.problems.append(str(e)))
        self.tab.on("dialog", lambda d: (self.problems.append(f"dialog {d.message}"),
                                         d.dismiss()))

    def texts(self, selector: str) -> list[str]:
        return [t.strip() for t in self.tab.locator(selector).all_inner_texts()]

    def screenshot(self, path: Path) -> None:
        self.tab.screenshot(path=str(path), full_page=True)

    def close(self) -> None:
        self.context.close()


def _keep(shot: Path, name: str) -> None:
    """A copy beside the benchmarks, so the page can be looked at without running anything;
    only when asked (GATEWAY_KEEP_SCREENSHOTS=1), so test runs leave the checkout clean."""
    if os.environ.get("GATEWAY_KEEP_SCREENSHOTS") != "1":
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACTS / name)


def _recorded_requests(db_url: str) -> int:
    async def count() -> int:
        engine = create_engine(db_url)
        try:
            async with engine.connect() as conn:
                return int(await conn.scalar(
                    select(func.coalesce(func.sum(audit_daily.c.requests), 0))) or 0)
        finally:
            await engine.dispose()

    return _run(count)


def _store(db_url: str, events: list[AuditEvent]) -> None:
    async def insert() -> None:
        engine = create_engine(db_url)
        try:
            await upgrade(engine)
            chain = Chain(f"report-test-{time.time_ns()}")
            await AuditRepository(engine).insert([chain.link(event_row(e)) for e in events])
        finally:
            await engine.dispose()

    _run(insert)


def _send_requests(gw: Gateway) -> set[str]:
    """Real requests (pooled, failed over, pinned; some streamed): the backends that served."""
    client = gw.client()
    backends = set()
    for i, model in enumerate(["auto", "failover", "only-b", "auto"] * 3):
        stream = i % 3 == 2
        raw = client.chat.completions.with_raw_response.create(
            model=model, max_tokens=16, stream=stream, **HELLO_BODY  # type: ignore[arg-type]
        )
        if stream:
            for _ in raw.parse():
                pass
        else:
            raw.parse()
        backends.add(raw.headers["x-gateway-backend"])
    return backends


def test_the_report_page_draws_real_traffic_in_chromium(
    gw: Gateway, browser: Any, tmp_path: Path
) -> None:
    before = _recorded_requests(gw.db_url)
    backends = _send_requests(gw)
    assert backends == {"sim-a", "sim-b"}
    sent = 12
    deadline = time.monotonic() + 10  # the audit writer commits in batches, off the request
    while _recorded_requests(gw.db_url) < before + sent and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _recorded_requests(gw.db_url) >= before + sent

    denied = httpx.get(f"{gw.url}/admin/reports", timeout=10)
    assert denied.status_code == 401
    reversed_range = httpx.get(f"{gw.url}/admin/reports?since=2026-02-01&until=2026-01-01",
                               headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=10)
    assert reversed_range.status_code == 400
    assert reversed_range.json()["error"]["type"] == "invalid_request_error"

    page = Page(browser, {"Authorization": f"Bearer {ADMIN_KEY}"})
    try:
        response = page.tab.goto(f"{gw.url}/admin/reports")
        assert response is not None and response.status == 200
        assert response.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in response.headers["content-security-policy"]
        assert page.tab.locator("svg.chart").count() >= 5  # TTFT only if streams were timed
        assert page.tab.locator("#cost svg.chart rect").count() >= len(backends)
        assert backends <= set(page.texts("#cost .legend li"))
        assert {"p50", "p95", "p99"} <= set(page.texts("#latency .legend li"))
        requests = page.tab.locator("#summary .card .v").first.inner_text()
        assert int(requests.replace(",", "")) >= sent
        assert "acme" in page.texts("#savings td")
        shot = tmp_path / "report_page.png"
        page.screenshot(shot)
        assert shot.stat().st_size > 10_000
        _keep(shot, "report_page.png")
        assert page.problems == []
    finally:
        page.close()


def test_the_cli_page_shows_injected_names_as_text_and_empty_ranges_plainly(
    browser: Any, tmp_path: Path
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path}/report.db"
    day = 1_795_000_000.0  # 2026-11-18 08:53 UTC
    _store(db_url, [
        make_event(ts_unix_s=day + i * 3600, tenant_name=EVIL, tenant_id="t-evil",
                   backend=f"{EVIL_NAME}-backend", rule=f"{EVIL_NAME}-rule") for i in range(3)
    ] + [make_event(ts_unix_s=day + 86_400 + i, backend="gpt-frontier", zone="external",
                    cost_micro_usd=4_000) for i in range(2)])
    out = tmp_path / "report.html"
    result = _elsewhere(lambda: CliRunner().invoke(cli, [
        "report", "html", "--out", str(out), "--database-url", db_url,
        "--since", "2026-11-16", "--until", "2026-11-19",
    ]))
    assert result.exit_code == 0, result.output
    empty = tmp_path / "empty.html"
    result = _elsewhere(lambda: CliRunner().invoke(cli, [
        "report", "html", "--out", str(empty), "--database-url", db_url,
        "--since", "2020-01-01", "--until", "2020-01-31",
    ]))
    assert result.exit_code == 0, result.output

    page = Page(browser)
    try:
        page.tab.goto(out.as_uri())
        assert page.tab.title().startswith("Gateway report")  # no injected script ran
        assert page.tab.locator("#savings img, #savings script").count() == 0
        assert EVIL in page.texts("#savings td")  # shown as the text it is
        assert f"{EVIL_NAME}-backend" in page.texts("#cost .legend li")
        # Six charts, plus unit economics' $ per 1K tokens and decode speed; no GPU is
        # declared here (no --policy), so no busy-share or tokens-per-GPU-hour chart.
        assert page.tab.locator("svg.chart").count() == 8
        assert page.tab.locator("#economics svg.chart").count() == 2
        page.screenshot(tmp_path / "report_cli.png")
        page.tab.goto(empty.as_uri())
        assert page.tab.locator("#empty h2").inner_text() == "No requests in this range"
        assert page.tab.locator("svg.chart").count() == 0
        page.screenshot(tmp_path / "report_empty.png")
        _keep(tmp_path / "report_empty.png", "report_page_empty.png")
        assert page.problems == []
    finally:
        page.close()


def test_a_browser_signs_in_with_the_admin_key_and_sees_the_charts(
    gw: Gateway, browser: Any, tmp_path: Path
) -> None:
    before = _recorded_requests(gw.db_url)
    _send_requests(gw)
    deadline = time.monotonic() + 10
    while _recorded_requests(gw.db_url) < before + 12 and time.monotonic() < deadline:
        time.sleep(0.1)
    page = Page(browser)  # no Authorization header: only what a person would type
    try:
        page.tab.goto(f"{gw.url}/admin/reports?since=7d")
        assert "/admin/login" in page.tab.url
        page.tab.fill("#key", "wrong-key")
        page.tab.click("button[type=submit]")
        assert "That is not the admin key" in page.tab.content()
        page.tab.fill("#key", ADMIN_KEY)
        with page.tab.expect_navigation():
            page.tab.click("button[type=submit]")
        assert page.tab.url == f"{gw.url}/admin/reports?since=7d"
        assert page.tab.locator("svg.chart").count() >= 5
        cookies = page.context.cookies()
        assert [c["httpOnly"] for c in cookies] == [True]
        assert cookies[0]["sameSite"] == "Strict" and ADMIN_KEY not in cookies[0]["value"]
        shot = tmp_path / "report_page_login.png"
        page.screenshot(shot)
        _keep(shot, "report_page_after_login.png")
        # A login console error (a 401 for the wrong key) is expected; nothing else.
        assert [p for p in page.problems if "401" not in p] == []
    finally:
        page.close()
