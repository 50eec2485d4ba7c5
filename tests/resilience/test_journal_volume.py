"""The audit journal on a 1 MB volume (a tmpfs mounted for the test) under steady load with a
healthy database: rows the database holds are removed promptly, so the volume never fills;
readiness stays true to the disk: 503 while it is full, ready again once space returns."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from sqlalchemy import func, select

from gateway.db.audit_tables import audit_log
from gateway.db.engine import create_engine
from tests.resilience.processes import gateway_before_one_sim

pytestmark = pytest.mark.resilience

REQUESTS = 1500  # ~1 KB of journal each: well over the volume's 1 MB if nothing were removed
MIN_FREE = 256 * 1024  # what readiness asks of the spool's volume (api/health.py)


@pytest.fixture
def small_volume(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "spool"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a 1 MB tmpfs here (needs root): {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def free_bytes(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


async def stored_rows(db_url: str) -> int:
    engine = create_engine(db_url)
    try:
        async with engine.connect() as conn:
            return int(await conn.scalar(select(func.count()).select_from(audit_log)) or 0)
    finally:
        await engine.dispose()


def test_a_small_journal_volume_never_fills_and_readiness_follows_the_disk(
        tmp_path: Path, small_volume: Path) -> None:
    lowest = [free_bytes(small_volume)]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            lowest[0] = min(lowest[0], free_bytes(small_volume))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    with gateway_before_one_sim(tmp_path, audit_spool_dir=str(small_volume)) as (gw, key):
        watcher.start()
        answered = 0
        try:
            with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=key, max_retries=0) as client:
                for n in range(REQUESTS):
                    client.chat.completions.create(
                        model="auto", max_tokens=4,
                        messages=[{"role": "user", "content": f"request {n} " + "x" * 300}])
                    answered += 1
        finally:
            done.set()
            watcher.join()
        assert answered == REQUESTS
        assert lowest[0] >= MIN_FREE, f"the volume fell to {lowest[0]} bytes free"
        ready = httpx.get(f"{gw.url}/readyz", timeout=10)
        assert ready.status_code == 200, ready.text
        db_url = f"sqlite+aiosqlite:///{tmp_path}/gw.db"
        deadline = time.monotonic() + 30
        while asyncio.run(stored_rows(db_url)) < REQUESTS and time.monotonic() < deadline:
            time.sleep(0.2)
        assert asyncio.run(stored_rows(db_url)) == REQUESTS  # nothing lost on the way

        # Fill the volume: readiness says so at once, and recovers when space returns.
        filler = small_volume / "filler"
        with filler.open("wb") as f:
            f.write(b"\0" * max(0, free_bytes(small_volume) - 64 * 1024))
        full = httpx.get(f"{gw.url}/readyz", timeout=10)
        assert full.status_code == 503, full.text
        assert "full" in full.json()["checks"]["audit"]
        filler.unlink()
        assert httpx.get(f"{gw.url}/readyz", timeout=10).status_code == 200
