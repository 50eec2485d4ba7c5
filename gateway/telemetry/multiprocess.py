"""One coherent set of Prometheus metrics from several worker processes.

`gateway serve --workers N` points prometheus_client's multiprocess mode at a directory the
workers share (PROMETHEUS_MULTIPROC_DIR, emptied at start-up): every Counter, Gauge and
Histogram writes its values to a per-process file there, and whichever worker answers a
scrape sums them all. Numbers the gateway reads when scraped (fleet state, audit writer,
budget leases) live in one process's memory; `CollectorBridge` copies them into such metrics
(counters by their increase, gauges by value), on every scrape of this worker and once a
second in every worker.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest, multiprocess
from prometheus_client.registry import Collector

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# How several workers' values of one gauge combine. Counts that each worker holds a share of
# add up; the rest are observations of the same shared thing (an engine's queue, the spool
# directory): the latest of the live workers' is the truth.
GAUGE_MODES = {
    "gateway_backend_in_flight": "livesum",
    "gateway_audit_backlog": "livesum",
    "gateway_audit_alarm": "livemax",
}
DEFAULT_GAUGE_MODE = "livemostrecent"


def multiprocess_dir() -> Path | None:
    """The shared directory when this process runs in multiprocess mode (prometheus_client
    decides at import time, from the environment, how every metric stores its values)."""
    found = os.environ.get(MULTIPROC_ENV)
    return Path(found) if found else None


def prepare_dir(path: Path) -> Path:
    """Create the directory, or empty it of an earlier run's files: a dead run's counters
    must not be added to this one's."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    return path


def render_all(path: Path) -> bytes:
    """Every worker's metrics, merged: what /metrics answers in multiprocess mode."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(path))
    return generate_latest(registry)


def sweep_dead_workers(path: Path) -> list[int]:
    """Drop the live gauges of workers that died without saying so (killed, out of memory:
    uvicorn starts a replacement, whose view would otherwise still add the dead one's
    in-flight count). Returns their pids."""
    dead = set()
    for gauge_file in path.glob("gauge_live*_*.db"):
        pid = int(gauge_file.stem.rsplit("_", 1)[1])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            dead.add(pid)
        except PermissionError:  # alive, another user's
            pass
    for pid in dead:
        multiprocess.mark_process_dead(pid, str(path))
    return sorted(dead)


def process_exited(path: Path) -> None:
    """Drop this worker's live gauges from the merged view (its counters stay: totals must
    never go backwards)."""
    multiprocess.mark_process_dead(os.getpid(), str(path))


class CollectorBridge:
    """Collectors read at scrape time, republished as multiprocess-mode metrics."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry  # holds the bridged metrics; never rendered itself
        self._collectors: list[Collector] = []
        self._counters: dict[str, Counter] = {}
        self._gauges: dict[str, Gauge] = {}
        self._published: dict[tuple[str, tuple[str, ...]], float] = {}

    def add(self, collector: Collector) -> None:
        self._collectors.append(collector)

    def publish(self) -> None:
        for collector in self._collectors:
            for family in collector.collect():
                for sample in family.samples:
                    labels = dict(sorted(sample.labels.items()))
                    if family.type == "counter" and sample.name.endswith("_total"):
                        self._count(family.name, family.documentation, labels, sample.value)
                    elif family.type == "gauge":
                        self._gauge(family.name, family.documentation, labels, sample.value)

    def _count(self, name: str, doc: str, labels: Mapping[str, str], value: float) -> None:
        counter = self._counters.get(name)
        if counter is None:
            counter = Counter(name, doc, list(labels), registry=self._registry)
            self._counters[name] = counter
        key = (name, tuple(labels.values()))
        increase = value - self._published.get(key, 0.0)
        if increase > 0:
            (counter.labels(**labels) if labels else counter).inc(increase)
            self._published[key] = value

    def _gauge(self, name: str, doc: str, labels: Mapping[str, str], value: float) -> None:
        gauge = self._gauges.get(name)
        if gauge is None:
            gauge = Gauge(name, doc, list(labels), registry=self._registry,
                          multiprocess_mode=GAUGE_MODES.get(name, DEFAULT_GAUGE_MODE))
            self._gauges[name] = gauge
        (gauge.labels(**labels) if labels else gauge).set(value)
