"""The gateway records each policy's GPU deployments when it starts and on every reload, so
reports charge GPU-hours from when a deployment was declared: a reload that changes nothing
keeps the span, a new price opens a new one, a deployment taken out is closed."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from gateway.app import create_app
from gateway.settings import Settings
from tests.e2e.conftest import ADMIN_KEY
from tests.support.servers import serve


def policy(hourly_usd: float | None, count: int = 2) -> str:
    gpu = f"    gpu: {{type: L4, hourly_usd: {hourly_usd}, count: {count}}}\n" \
        if hourly_usd is not None else ""
    return ("version: 1\nbackends:\n  - name: llama\n    provider: vllm\n"
            "    base_url: http://127.0.0.1:9/v1\n    model: m\n    context_window: 1024\n"
            f"{gpu}models:\n  auto: [llama]\n")


def spans(db: Path) -> list[tuple[str, int, int, bool]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT backend, hourly_micro_usd, gpu_count, until IS NULL "
                            "FROM gpu_deployments ORDER BY since").fetchall()
    return [(b, h, c, bool(o)) for b, h, c, o in rows]


def wait_for_spans(db: Path, expected: list[tuple[str, int, int, bool]]) -> None:
    deadline = time.monotonic() + 10
    while spans(db) != expected:
        assert time.monotonic() < deadline, spans(db)
        time.sleep(0.05)


def test_start_reload_and_removal_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(policy(0.8))
    db = tmp_path / "gw.db"
    settings = Settings(database_url=f"sqlite+aiosqlite:///{db}", policy_path=path,
                        policy_poll_interval_s=0.05, admin_key=ADMIN_KEY)
    with serve(create_app(settings)):
        # Two GPUs at $0.80 each: the deployment costs $1.60 an hour.
        assert spans(db) == [("llama", 1_600_000, 2, True)]
        path.write_text(policy(0.8) + "\n# a comment: the same deployment\n")
        time.sleep(0.5)
        assert spans(db) == [("llama", 1_600_000, 2, True)]
        path.write_text(policy(1.0))
        wait_for_spans(db, [("llama", 1_600_000, 2, False), ("llama", 2_000_000, 2, True)])
        path.write_text(policy(None))
        wait_for_spans(db, [("llama", 1_600_000, 2, False), ("llama", 2_000_000, 2, False)])
    # A restart with the GPUs back opens a new span; nothing is charged for the gap.
    path.write_text(policy(1.0))
    with serve(create_app(settings)):
        assert spans(db)[-1] == ("llama", 2_000_000, 2, True) and len(spans(db)) == 3
