"""/metrics labels request, token and cost counters with tenant names, so it answers only the
metrics key (what Prometheus is given) or the admin key, compared in constant time; with
neither configured it is closed, and says which setting opens it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.support.servers import serve

POLICY = """\
version: 1
backends:
  - name: home
    provider: vllm
    base_url: http://127.0.0.1:9/v1
    model: m
    context_window: 4096
"""
METRICS_KEY = "metrics-test-key"
ADMIN_KEY = "admin-test-key"


def _serve(tmp: Path, **keys: str) -> Iterator[tuple[str, str]]:
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    tenant_key = create_key(db_url, "acme")
    settings = Settings(database_url=db_url, audit_spool_dir=tmp / "spool", **keys)
    with serve(create_app(settings, policy=parse_policy(POLICY))) as gateway:
        yield gateway.url, tenant_key


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[str, str]]:
    yield from _serve(tmp_path, metrics_key=METRICS_KEY, admin_key=ADMIN_KEY)


@pytest.fixture
def unkeyed(tmp_path: Path) -> Iterator[tuple[str, str]]:
    yield from _serve(tmp_path)


def scrape(url: str, key: str | None) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key is not None else {}
    return httpx.get(url + "/metrics", headers=headers, timeout=10)


def test_the_metrics_key_and_the_admin_key_read_metrics(keyed: tuple[str, str]) -> None:
    url, _ = keyed
    for key in (METRICS_KEY, ADMIN_KEY):
        resp = scrape(url, key)
        assert resp.status_code == 200, resp.text
        assert resp.headers["content-type"].startswith("text/plain")
        assert "gateway_requests_total" in resp.text


def test_anyone_else_gets_an_openai_shaped_401(keyed: tuple[str, str]) -> None:
    url, tenant_key = keyed
    for key in (None, tenant_key, "wrong", METRICS_KEY + "x", METRICS_KEY[:-1], "Basic"):
        resp = scrape(url, key)
        assert resp.status_code == 401, key
        error = resp.json()["error"]
        assert error["type"] == "invalid_request_error" and error["message"]
        assert "gateway_" not in resp.text


def test_with_no_key_configured_metrics_are_closed_and_say_how_to_open(
    unkeyed: tuple[str, str],
) -> None:
    url, tenant_key = unkeyed
    for key in (None, tenant_key):
        resp = scrape(url, key)
        assert resp.status_code == 401
        error = resp.json()["error"]
        assert error["code"] == "metrics_disabled" and "GATEWAY_METRICS_KEY" in error["message"]
