"""API keys are stored only as hashes: after keys are made with the CLI and the admin API and
used, the raw key is in no column of any table (SQLite and Postgres) nor in the logs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from gateway.tenancy.keys import display_prefix
from tests.e2e.conftest import ADMIN_KEY, Gateway, policy_text
from tests.integration.conftest import engine
from tests.security.evidence import database_text, find, logs_into
from tests.support.servers import free_port, serve

__all__ = ["engine"]
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def cli_key(db_url: str, tenant: str, log: Path) -> str:
    """`gateway keys create`: the key is printed once, on stdout's last line."""
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "keys", "create", "--tenant", tenant, "--name", "cli"],
        env={**os.environ, "GATEWAY_DATABASE_URL": db_url}, capture_output=True, text=True,
        timeout=60, check=True)
    log.write_text(done.stderr)  # what an operator's terminal log would keep
    return done.stdout.strip().splitlines()[-1]


def db_url_of(engine: AsyncEngine) -> str:
    return engine.url.render_as_string(hide_password=False)


def _exercise(url: str, ports: dict[str, int], tmp: Path, keys: dict[str, str]) -> dict[str, str]:
    """A gateway on the database: one more key through the admin API, every key used. Returns
    the answers that could echo a key (the key listing, a refusal of a near-miss key)."""
    settings = Settings(database_url=url, admin_key=ADMIN_KEY, access_log=True,
                        audit_log_path=str(tmp / "audit.jsonl"), audit_spool_dir=tmp / "spool")
    with logs_into(tmp / "gateway.log"), serve(create_app(
            settings, policy=parse_policy(policy_text(ports, free_port())))) as server:
        made = httpx.post(f"{server.url}/admin/tenants", json={"name": "hashed-api"},
                          headers=ADMIN, timeout=10)
        assert made.status_code == 201, made.text
        issued = httpx.post(f"{server.url}/admin/tenants/hashed-api/keys", json={"name": "api"},
                            headers=ADMIN, timeout=10)
        assert issued.status_code == 201, issued.text
        keys["api"] = issued.json()["key"]
        for label, key in keys.items():  # each key works, so it was stored (as something)
            with openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0) as client:
                client.chat.completions.create(
                    model="auto", max_tokens=2, messages=[{"role": "user", "content": label}])
            assert httpx.get(f"{server.url}/v1/usage", timeout=10,
                             headers={"authorization": f"Bearer {key}"}).status_code == 200
        rejected = httpx.get(f"{server.url}/v1/usage", timeout=10,
                             headers={"authorization": f"Bearer {keys['api']}x"})
        assert rejected.status_code == 401
        return {"GET /admin/keys": httpx.get(f"{server.url}/admin/keys", headers=ADMIN,
                                             timeout=10).text,
                "401 answer": rejected.text}


async def test_raw_keys_are_nowhere_in_the_database_or_logs(
    engine: AsyncEngine, gateway: Gateway, tmp_path: Path
) -> None:
    url = db_url_of(engine)
    keys = {"cli": await asyncio.to_thread(cli_key, url, "hashed-cli", tmp_path / "cli.log")}
    ports = {name[-1]: sim.port for name, sim in gateway.sims.items()}
    answers = await asyncio.to_thread(_exercise, url, ports, tmp_path, keys)
    # What would identify a key: the whole key, and its secret part without the shown prefix.
    needles = {f"{label} key": key for label, key in keys.items()} | {
        f"{label} key's secret part": key[len(display_prefix(key)):]
        for label, key in keys.items()}
    haystacks = await database_text(engine) | answers | {
        "gateway log": (tmp_path / "gateway.log").read_text(),
        "cli log": (tmp_path / "cli.log").read_text(),
        "audit mirror": (tmp_path / "audit.jsonl").read_text(),
    }
    assert "api_keys" in haystacks and haystacks["gateway log"]
    assert find(needles, haystacks) == []
    assert all(display_prefix(key) in haystacks["api_keys"] for key in keys.values())
