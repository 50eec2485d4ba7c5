"""The gateway's Prometheus metrics, on a registry of its own (no process-global state), served
at GET /metrics. With several workers each serves its own process's numbers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from gateway.telemetry.fleet_metrics import FleetCollector


class GatewayMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.policy_reloads = Counter(
            "gateway_policy_reloads", "Policy file reload attempts by result",
            ["result"], registry=self.registry,
        )
        self.policy_generation = Gauge(
            "gateway_policy_generation", "How many policies this process has loaded",
            registry=self.registry,
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
        self.audit_backlog = Gauge(
            "gateway_audit_backlog", "Audit events waiting to be written",
            registry=self.registry,
        )

    def watch_fleet(self, view: Callable[[], dict[str, dict[str, Any]]]) -> None:
        """Publish every backend's live state (read when /metrics is scraped)."""
        self.registry.register(FleetCollector(view))

    def policy_reloaded(self, ok: bool) -> None:
        self.policy_reloads.labels(result="ok" if ok else "rejected").inc()
        if ok:
            self.policy_generation.inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
