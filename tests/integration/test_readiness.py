"""/health and /ready against real services: Redis and the database, up and down."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.support.servers import free_port, serve

POLICY = parse_policy(
    "version: 1\nbackends:\n  - name: b\n    provider: vllm\n"
    "    base_url: http://127.0.0.1:9/v1\n    model: m\n    context_window: 1024\n"
)


def settings(tmp_path: Path, redis_url: str | None) -> Settings:
    return Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/gw.db", redis_url=redis_url,
                    audit_log_path=str(tmp_path / "audit.jsonl"))


@pytest.mark.redis
def test_ready_checks_real_redis_and_database(tmp_path: Path, redis_url: str) -> None:
    with serve(create_app(settings(tmp_path, redis_url), policy=POLICY)) as server:
        assert httpx.get(f"{server.url}/health").json() == {"status": "ok"}
        resp = httpx.get(f"{server.url}/ready")
        assert resp.status_code == 200, resp.text
        assert resp.json()["checks"]["redis"] == "ok"
        assert resp.json()["checks"]["database"] == "ok"


def test_ready_degrades_when_redis_is_unreachable_and_tenants_fail_open(tmp_path: Path) -> None:
    # Tenants the policy does not name fail open: they are still served without Redis, so
    # the replica stays in rotation and says what is degraded.
    dead = f"redis://127.0.0.1:{free_port()}/0"
    with serve(create_app(settings(tmp_path, dead), policy=POLICY)) as server:
        assert httpx.get(f"{server.url}/health").status_code == 200
        resp = httpx.get(f"{server.url}/ready")
        assert resp.status_code == 200, resp.text
        redis = resp.json()["checks"]["redis"]
        assert redis.startswith("degraded: unreachable") and "fail_open" in redis
