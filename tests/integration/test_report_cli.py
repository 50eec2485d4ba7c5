"""`gateway report cost|savings|economics|audit` against a real database (SQLite and
Postgres): the same numbers as the report functions, in JSON, CSV and as a table."""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.records import Chain, event_row
from gateway.audit.repository import AuditRepository
from gateway.cli.main import cli
from gateway.deployments.repository import DeclaredGpus, DeploymentLog
from gateway.tenancy.repository import TenantRepository
from tests.support.audit_events import make_event

DAY = 1_795_000_000.0  # 2026-11-18T11:06:40Z
RANGE = ("--since", "2026-11-18", "--until", "2026-11-19")
POLICY = """\
version: 1
backends:
  - name: llama-8b
    provider: vllm
    base_url: http://127.0.0.1:9/v1
    model: m
    context_window: 8192
    gpu: {type: L4, hourly_usd: 0.5, count: 4}
  - name: gpt-frontier
    provider: openai
    base_url: https://api.example.com/v1
    model: gpt-4o
    zone: external
    context_window: 8192
    price_per_mtok_usd: {input: 2.5, output: 10.0}
rules:
  - name: sensitive-stays-home
    when: {sensitivity: [pii, secret, phi]}
    allow_zones: [self_hosted]
"""


@dataclass
class Setup:
    db_url: str
    policy_path: Path

    async def run(self, *args: str) -> Result:
        """`gateway report ARGS` in a thread: the CLI calls asyncio.run, which cannot nest."""
        env = {"GATEWAY_DATABASE_URL": None, "GATEWAY_POLICY_PATH": str(self.policy_path)}
        return await asyncio.to_thread(
            CliRunner().invoke, cli, ["report", *args, "--database-url", self.db_url],
            env=env, catch_exceptions=False,
        )

    async def json(self, *args: str) -> dict[str, Any]:
        result = await self.run(*args, "--format", "json")
        assert result.exit_code == 0, result.output
        body: dict[str, Any] = orjson.loads(result.stdout)
        return body


@pytest.fixture
async def setup(engine: AsyncEngine, tmp_path: Path) -> AsyncIterator[Setup]:
    repo = TenantRepository(engine)
    acme, beta = await repo.ensure_tenant("acme"), await repo.ensure_tenant("beta")
    chain = Chain("cli")
    batch = [
        make_event(ts_unix_s=DAY + i, tenant_id=acme.id, tenant_name="acme") for i in range(3)
    ] + [
        make_event(ts_unix_s=DAY + 5, tenant_id=beta.id, tenant_name="beta", key_id="k-beta",
                   backend="gpt-frontier", zone="external", cost_micro_usd=4000),
    ]
    await AuditRepository(engine).insert([chain.link(event_row(e)) for e in batch])
    # The gateway put llama-8b's 4 GPUs ($2 an hour for all) in force at 11:00 on the 18th.
    await DeploymentLog(engine).declare([DeclaredGpus("llama-8b", 2_000_000, 4)],
                                        datetime(2026, 11, 18, 11, tzinfo=UTC))
    policy_path = tmp_path / "policy.yaml"
    policy_path.write_text(POLICY)
    yield Setup(engine.url.render_as_string(hide_password=False), policy_path)


# Paid: 13 hours of the 18th ($26) and all of the 19th ($48). Busy: the minute 11:06 of the
# 780 paid on the 18th, so $26 / 780 goes to acme's requests and the rest is idle.
ACME_GPU = "0.033333"
IDLE = "73.966667"


async def test_cost_in_every_format(setup: Setup) -> None:
    body = await setup.json("cost", *RANGE)
    assert body["by"] == "tenant" and body["tenant"] is None
    assert [(r["tenant"], r["requests"], r["api_cost_usd"], r["gpu_cost_usd"], r["cost_usd"])
            for r in body["rows"]] == [
        ("acme", 3, "0.000000", ACME_GPU, ACME_GPU), ("beta", 1, "0.004000", "0.000000",
                                                      "0.004000"),
        ("(idle GPUs)", 0, "0.000000", IDLE, IDLE)]
    assert body["totals"]["cost_usd"] == "74.004000"

    result = await setup.run("cost", *RANGE, "--tenant", "acme", "--by", "backend",
                             "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows == [{"backend": "llama-8b", "requests": "3", "errors": "0",
                     "prompt_tokens": "3600", "completion_tokens": "900", "cached_tokens": "0",
                     "tokens": "4500", "api_cost_usd": "0.000000", "gpu_cost_usd": ACME_GPU,
                     "cost_usd": ACME_GPU}]

    table = await setup.run("cost", *RANGE, "--by", "day")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0].startswith("cost: since 2026-11-18T00:00:00+00:00")
    assert lines[2].split() == ["2026-11-18", "4", "0", "4800", "1200", "0", "6000",
                                "0.004000", ACME_GPU, "0.037333"]
    assert lines[3].split()[:2] == ["(idle", "GPUs)"] and lines[3].split()[-1] == IDLE
    assert lines[-1].split()[0] == "total" and lines[-1].split()[-1] == "74.004000"


async def test_savings_and_economics(setup: Setup) -> None:
    savings = await setup.json("savings", *RANGE, "--tenant", "acme")
    (acme,) = savings["rows"]
    # Three requests' baseline is $0.018; their share of the GPU-hours paid is more.
    assert (acme["cost_usd"], acme["baseline_usd"], acme["saved_usd"]) == (
        ACME_GPU, "0.018000", "-0.015333")
    assert acme["self_hosted_share"] == 1.0 and savings["tenant"] == "acme"

    economics = await setup.json("economics", *RANGE, "--policy", str(setup.policy_path))
    rows = {r["backend"]: r for r in economics["rows"]}
    llama = rows["llama-8b"]
    # 4 GPUs for the 37 hours since 11:00 on the 18th, at $2 an hour for all four.
    assert llama["gpu_cost_usd"] == "74.000000" and llama["idle_gpu_cost_usd"] == IDLE
    assert llama["gpu_hours_paid"] == 148.0
    assert llama["tokens_per_gpu_hour"] == round(4500 / 148, 1)
    assert llama["usd_per_1k_tokens"] == f"{74 * 1000 / 4500:.6f}"
    assert rows["gpt-frontier"]["usd_per_1k_tokens"] == f"{0.004 * 1000 / 1500:.6f}"
    assert economics["gpu_cost_usd"] == "74.000000"


async def test_audit_pages_through_the_cli(setup: Setup) -> None:
    first = await setup.json("audit", *RANGE, "--limit", "3")
    assert [r["ts"][11:19] for r in first["rows"]] == ["11:06:45", "11:06:42", "11:06:41"]
    second = await setup.json("audit", *RANGE, "--limit", "3", "--cursor", first["next_cursor"])
    assert [r["ts"][11:19] for r in second["rows"]] == ["11:06:40"]
    assert second["next_cursor"] is None
    beta = await setup.json("audit", *RANGE, "--tenant", "beta")
    assert [r["backend"] for r in beta["rows"]] == ["gpt-frontier"]


async def test_mistakes_are_named(setup: Setup) -> None:
    bad_since = await setup.run("cost", "--since", "last tuesday")
    assert bad_since.exit_code == 2 and "--since" in bad_since.output
    nobody = await setup.run("cost", "--tenant", "nobody")
    assert nobody.exit_code == 1 and "no tenant named 'nobody'" in nobody.output
    per_tenant = await setup.run("economics", "--tenant", "acme",
                                 "--policy", str(setup.policy_path))
    assert per_tenant.exit_code == 2 and "across tenants" in per_tenant.output
    cursor = await setup.run("audit", "--cursor", "nonsense")
    assert cursor.exit_code == 2 and "--cursor" in cursor.output
