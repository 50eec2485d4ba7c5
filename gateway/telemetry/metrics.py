"""The gateway's Prometheus metrics, on a registry of its own (no process-global state), served
at GET /metrics. With several workers (multiprocess mode, see telemetry/multiprocess.py) any
worker serves all workers' numbers, merged."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gateway.telemetry.fleet_metrics import FleetCollector
from gateway.telemetry.multiprocess import (
    CollectorBridge,
    multiprocess_dir,
    render_all,
    sweep_dead_workers,
)
from gateway.telemetry.request_metrics import RequestMetrics


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.multiprocess_dir = multiprocess_dir()
        # Scrape-time collectors go through the bridge in multiprocess mode (their numbers
        # are one process's), straight into the registry otherwise.
        self._bridge = CollectorBridge(self.registry) if self.multiprocess_dir else None
        self.policy_reloads = Counter(
            "gateway_policy_reloads", "Policy file reload attempts by result",
            ["result"], registry=self.registry,
        )
        self.policy_generation = Gauge(
            "gateway_policy_generation", "How many policies this process has loaded",
            registry=self.registry, multiprocess_mode="livemax",
        )
        self.budget_rejections = Counter(
            "gateway_budget_rejections", "Requests refused by a budget or rate limit",
            ["reason"], registry=self.registry,
        )
        self.budget_store_errors = Counter(
            "gateway_budget_store_errors",
            "Budget store (Redis) calls that failed; admits served unmetered or refused",
            ["operation"], registry=self.registry,
        )
        self.readiness_check = Gauge(
            "gateway_readiness_check",
            "Each readiness check's last verdict: 1 ok, 0 degraded (still ready), -1 error",
            ["check"], registry=self.registry, multiprocess_mode="livemin",
        )
        self.admin_auth_failures = Counter(
            "gateway_admin_auth_failures",
            "Admin key tries refused: wrong_key, or throttled (not even compared)",
            ["outcome"], registry=self.registry,
        )
        self.requests = RequestMetrics(self.registry)
        self.audit_backlog = Gauge(
            "gateway_audit_backlog", "Audit events waiting to be written",
            registry=self.registry, multiprocess_mode="livesum",
        )

    def watch_fleet(self, view: Callable[[], dict[str, dict[str, Any]]]) -> None:
        """Publish every backend's live state (read when /metrics is scraped)."""
        self._watch(FleetCollector(view))

    def watch_audit(self, read: Callable[[], Mapping[str, int]]) -> None:
        """Publish the audit writer's counters and spool depth (read when scraped)."""
        self._watch(NumbersCollector(read, AUDIT_COUNTERS, AUDIT_GAUGES))

    def watch_budget_leases(self, read: Callable[[], Mapping[str, int]]) -> None:
        """Publish how many requests were admitted locally against how many calls reached
        the shared budget store (read when scraped)."""
        self._watch(NumbersCollector(read, LEASE_COUNTERS))

    def watch_shadow(self, read: Callable[[], Mapping[str, int]]) -> None:
        """Publish shadow judging's counters and queue depth (read when scraped)."""
        self._watch(NumbersCollector(read, SHADOW_COUNTERS, SHADOW_GAUGES))

    def _watch(self, collector: Collector) -> None:
        if self._bridge is not None:
            self._bridge.add(collector)
        else:
            self.registry.register(collector)

    def publish(self) -> None:
        """Copy this process's scrape-time numbers where the other workers' scrapes see them
        (multiprocess mode only; the lifespan calls it every second)."""
        if self._bridge is not None:
            self._bridge.publish()

    def policy_reloaded(self, ok: bool) -> None:
        self.policy_reloads.labels(result="ok" if ok else "rejected").inc()
        if ok:
            self.policy_generation.inc()

    async def publish_forever(self, backlog: Callable[[], int]) -> None:
        """Multiprocess mode: this worker's scrape-time numbers, where another worker
        answering a scrape reads them, once a second."""
        while True:
            await asyncio.sleep(1.0)
            self.audit_backlog.set(backlog())
            self.publish()
            if self.multiprocess_dir is not None:
                sweep_dead_workers(self.multiprocess_dir)

    def render(self) -> bytes:
        if self.multiprocess_dir is not None:
            self.publish()
            return render_all(self.multiprocess_dir)
        return generate_latest(self.registry)


# audit writer number → (metric, help); counters get Prometheus' _total suffix
AUDIT_COUNTERS = {
    "rows_written": ("gateway_audit_rows_written", "Audit rows committed to the database"),
    "rows_spooled": ("gateway_audit_rows_spooled", "Audit rows written to the disk spool"),
    "write_failures": ("gateway_audit_write_failures",
                       "Audit database writes that failed or timed out (rows were spooled)"),
    "spool_errors": ("gateway_audit_spool_errors",
                     "Audit spool writes or reads that failed: rows held in memory (alarm)"),
    "dropped": ("gateway_audit_rows_dropped",
                "Audit events not stored (each logged in full at ERROR)"),
    "journal_errors": ("gateway_audit_journal_errors",
                       "Audit journal appends or fsyncs that failed (alarm)"),
    "rows_quarantined": ("gateway_audit_rows_quarantined",
                         "Audit rows the database refused, kept in the quarantine file"),
}
AUDIT_GAUGES = {
    "spool_rows": ("gateway_audit_spool_rows", "Audit rows in the spool, awaiting replay"),
    "spool_bytes": ("gateway_audit_spool_bytes", "Size of the audit spool"),
    "alarm": ("gateway_audit_alarm", "1 while audit rows are at risk (readiness fails)"),
}


SHADOW_COUNTERS = {
    "queued": ("gateway_shadow_jobs_queued", "Requests queued for shadow judging"),
    "dropped_queue_full": ("gateway_shadow_jobs_dropped",
                           "Requests sampled for shadow judging but dropped: the queue was full"),
    "skipped_not_allowed": ("gateway_shadow_jobs_not_allowed",
                            "Shadow jobs skipped: the policy would not allow the request on "
                            "the strong or judge backend"),
    "skipped_budget": ("gateway_shadow_jobs_over_budget",
                       "Shadow jobs skipped: the day's shadow budget was spent"),
    "judged": ("gateway_shadow_judgements", "Shadow judgements stored"),
    "failed": ("gateway_shadow_failures", "Shadow judgements whose calls or verdict failed"),
}

SHADOW_GAUGES = {
    "queue": ("gateway_shadow_queue", "Shadow jobs waiting"),
}


LEASE_COUNTERS = {
    "admitted": ("gateway_budget_admitted_locally",
                 "Requests admitted against a budget lease, without a Redis call of their own"),
    "leases": ("gateway_budget_leases", "Leases asked of the shared budget store"),
    "settles": ("gateway_budget_lease_settles",
                "Leases settled in the shared budget store (retries included)"),
    "settle_failures": ("gateway_budget_lease_settle_failures",
                        "Lease settles the shared budget store did not take (retried)"),
}


class NumbersCollector(Collector):
    """Counters and gauges read from one snapshot of numbers when /metrics is scraped."""

    def __init__(self, read: Callable[[], Mapping[str, int]],
                 counters: Mapping[str, tuple[str, str]],
                 gauges: Mapping[str, tuple[str, str]] | None = None) -> None:
        self._read, self._counters, self._gauges = read, counters, gauges or {}

    def collect(self) -> Iterator[Metric]:
        numbers = self._read()
        for key, (name, doc) in self._counters.items():
            yield CounterMetricFamily(name, doc, value=numbers[key])
        for key, (name, doc) in self._gauges.items():
            yield GaugeMetricFamily(name, doc, value=numbers[key])
