"""A deployment's DCGM exporter, named in the policy, is scraped beside the engines; its GPU
utilisation and memory used reach the economics report (through backend_gpu_minutes)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.app import create_app
from gateway.db.engine import create_engine
from gateway.deployments.repository import DeclaredGpus
from gateway.policy.loader import parse_policy
from gateway.reports.build import Scope, economics_report
from gateway.reports.periods import parse_period
from gateway.settings import Settings
from tests.e2e.conftest import ADMIN_KEY
from tests.support.mock_dcgm import DcgmState, create_dcgm_app
from tests.support.servers import serve


def test_gpu_utilisation_reaches_the_economics_report(tmp_path: Path) -> None:
    state = DcgmState([80.0, 40.0], [60_000.0, 20_000.0])
    with serve(create_dcgm_app(state)) as exporter:
        policy = parse_policy(
            "version: 1\nbackends:\n  - name: llama\n    provider: vllm\n"
            "    base_url: http://127.0.0.1:9/v1\n    model: m\n    context_window: 1024\n"
            "    gpu: {type: H100, hourly_usd: 4.5, count: 2}\n"
            f"    dcgm_url: {exporter.url}/metrics\nmodels:\n  auto: [llama]\n")
        db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
        with serve(create_app(Settings(database_url=db_url, admin_key=ADMIN_KEY),
                              policy=policy)):
            deadline = time.monotonic() + 10
            while state.scrapes == 0:
                assert time.monotonic() < deadline, "the exporter was never scraped"
                time.sleep(0.05)
        # Stopping the gateway flushed the minute it sampled.

    async def read() -> dict[str, object]:
        engine = create_engine(db_url)
        try:
            now = datetime.now(UTC)
            table = await economics_report(engine, parse_period("today", None, now),
                                           Scope(None, None, now),
                                           [DeclaredGpus("llama", 4_500_000, 2)], {})
        finally:
            await engine.dispose()
        names = [c.name for c in table.columns]
        return dict(zip(names, table.rows[0], strict=True))

    row = asyncio.run(read())
    assert row["gpu_util"] == pytest.approx(0.6)  # (80 % + 40 %) / 2
    assert row["gpu_memory_used_bytes"] == 80_000 * 1024 * 1024
