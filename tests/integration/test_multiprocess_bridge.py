"""Scrape-time numbers (audit writer, fleet) republished in prometheus_client's multiprocess
mode: real worker processes publish into one directory, and the merge adds counters by
their increase, sums shared gauges, and forgets the live gauges of a worker that died
without a word while keeping its counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from gateway.telemetry.multiprocess import prepare_dir, render_all, sweep_dead_workers

REPO = Path(__file__).resolve().parents[2]

# One worker: publishes its audit numbers twice (the counter grows from 3 to 5) and its fleet
# view once, then exits without marking itself dead (as a killed worker would).
WORKER = """
import sys
from gateway.telemetry.metrics import GatewayMetrics
rows, in_flight, running = (int(a) for a in sys.argv[1:4])
metrics = GatewayMetrics()
numbers = {"rows_written": 3, "rows_spooled": 0, "write_failures": 0, "spool_errors": 0,
           "dropped": 0, "rows_quarantined": 0, "spool_rows": 0, "spool_bytes": 0, "alarm": 0,
           "journal_errors": 0}
metrics.watch_audit(lambda: numbers)
metrics.watch_fleet(lambda: {"a": {"in_flight": in_flight, "running": running}})
metrics.publish()
numbers["rows_written"] = rows
metrics.publish()
metrics.publish()  # nothing new: nothing added
"""


def run_worker(directory: Path, rows: int, in_flight: int, running: int) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory), "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", WORKER, str(rows), str(in_flight), str(running)],
                   env=env, check=True, timeout=120)


def values(directory: Path) -> dict[str, float]:
    found = {}
    for family in text_string_to_metric_families(render_all(directory).decode()):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}"] = sample.value
    return found


def test_two_workers_numbers_merge_and_a_dead_ones_gauges_are_swept(tmp_path: Path) -> None:
    directory = prepare_dir(tmp_path / "metrics")
    run_worker(directory, rows=5, in_flight=2, running=7)
    run_worker(directory, rows=8, in_flight=3, running=9)
    merged = values(directory)
    assert merged["gateway_audit_rows_written_total{}"] == 5 + 8  # increases, not re-adds
    # both workers' processes have exited without marking themselves dead: still counted
    assert merged["gateway_backend_in_flight{backend=a}"] == 2 + 3
    assert merged["gateway_backend_running{backend=a}"] == 9  # the most recent observation

    swept = sweep_dead_workers(directory)
    assert len(swept) == 2
    merged = values(directory)
    assert "gateway_backend_in_flight{backend=a}" not in merged
    assert merged["gateway_audit_rows_written_total{}"] == 13  # counts outlive their worker


def test_prepare_dir_empties_only_metric_files(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_1.db").write_bytes(b"x")
    (directory / "notes.txt").write_text("kept")
    prepare_dir(directory)
    assert sorted(p.name for p in directory.iterdir()) == ["notes.txt"]
    assert prepare_dir(tmp_path / "new" / "dir").is_dir()
