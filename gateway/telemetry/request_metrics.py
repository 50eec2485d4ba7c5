"""Per-request Prometheus metrics, counted from audit events as the audit writer drains them:
off the request path (a batch every 200 ms at most), and from the same record finance and
security read, so the dashboard and the reports cannot disagree about what happened."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Histogram

from gateway.types import AuditEvent

# Seconds: from a cached short answer to a long generation.
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
NONE = "none"  # the label when no backend was chosen (refused before dispatch)

Child = TypeVar("Child", Counter, Histogram)


def bound(metric: Child) -> Callable[..., Child]:
    """`metric.labels`, remembered per label values: prometheus_client validates the values
    and takes a lock on every call, several times per request here. The cache holds exactly
    the children the metric itself keeps forever, so it grows no further than the metric."""
    children: dict[tuple[str, ...], Child] = {}

    def child(*values: str) -> Child:
        found = children.get(values)
        if found is None:
            found = children[values] = metric.labels(*values)
        return found

    return child


class RequestMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "gateway_requests", "Requests finished, by tenant, backend and HTTP status",
            ["tenant", "backend", "status"], registry=registry,
        )
        self.duration = Histogram(
            "gateway_request_duration_seconds", "Whole request time, by backend",
            ["backend"], buckets=LATENCY_BUCKETS, registry=registry,
        )
        self.ttft = Histogram(
            "gateway_ttft_seconds", "Time to first token of streamed requests, by backend",
            ["backend"], buckets=TTFT_BUCKETS, registry=registry,
        )
        self.tokens = Counter(
            "gateway_tokens", "Tokens by tenant, backend and kind (prompt, completion, cached)",
            ["tenant", "backend", "kind"], registry=registry,
        )
        self.cost = Counter(
            "gateway_cost_usd", "What requests cost, by tenant and backend",
            ["tenant", "backend"], registry=registry,
        )
        self.decisions = Counter(
            "gateway_decisions", "Routing decisions by the rule that fired",
            ["rule"], registry=registry,
        )
        self.spill_overs = Counter(
            "gateway_spill_overs", "Requests served by a spill_to backend (pool saturated)",
            ["backend"], registry=registry,
        )

        self._requests, self._decisions = bound(self.requests), bound(self.decisions)
        self._duration, self._ttft = bound(self.duration), bound(self.ttft)
        self._tokens, self._cost = bound(self.tokens), bound(self.cost)
        self._spill_overs = bound(self.spill_overs)

    def observe(self, events: list[AuditEvent]) -> None:
        for event in events:
            tenant, backend = event.tenant_name or event.tenant_id, event.backend or NONE
            self._requests(tenant, backend, str(event.status)).inc()
            if event.rule is not None:
                self._decisions(event.rule).inc()
            if event.backend is None:
                continue
            self._duration(backend).observe(event.duration_s)
            if event.ttft_s is not None:
                self._ttft(backend).observe(event.ttft_s)
            for kind, count in (("prompt", event.prompt_tokens),
                                ("completion", event.completion_tokens),
                                ("cached", event.cached_tokens)):
                if count:
                    self._tokens(tenant, backend, kind).inc(count)
            if event.cost_micro_usd:
                self._cost(tenant, backend).inc(event.cost_micro_usd / 1_000_000)
            if event.spill_over:
                self._spill_overs(backend).inc()
