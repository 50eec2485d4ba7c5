"""Per-request metrics counted from audit events: the cached label children count into the
same series a scrape reads, one per label set."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from gateway.telemetry.request_metrics import RequestMetrics
from gateway.types import AuditEvent


def _event(tenant: str, backend: str | None, status: int = 200, **extra: object) -> AuditEvent:
    return AuditEvent(
        request_id="r", ts_unix_s=0.0, tenant_id="t-id", key_id="k", endpoint="chat",
        requested_model="bench", backend=backend, upstream_model=None, rule="cheapest",
        status=status, error_type=None, prompt_tokens=10, completion_tokens=5, cached_tokens=0,
        cost_micro_usd=2_500_000, duration_s=0.2, ttft_s=None, attempts=1, stream=False,
        outcome="ok", tenant_name=tenant, **extra,  # type: ignore[arg-type]
    )


def test_events_count_into_one_series_per_label_set() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)
    metrics.observe([_event("acme", "a"), _event("acme", "a"), _event("acme", "b"),
                     _event("beta", None, status=429)])
    metrics.observe([_event("acme", "a", spill_over=True)])

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert value("gateway_requests_total", tenant="acme", backend="a", status="200") == 3
    assert value("gateway_requests_total", tenant="acme", backend="b", status="200") == 1
    assert value("gateway_requests_total", tenant="beta", backend="none", status="429") == 1
    assert value("gateway_decisions_total", rule="cheapest") == 5
    assert value("gateway_tokens_total", tenant="acme", backend="a", kind="prompt") == 30
    assert value("gateway_tokens_total", tenant="acme", backend="a", kind="cached") is None
    assert value("gateway_cost_usd_total", tenant="acme", backend="a") == 7.5
    assert value("gateway_request_duration_seconds_count", backend="a") == 3
    assert value("gateway_spill_overs_total", backend="a") == 1
    assert value("gateway_request_duration_seconds_count", backend="none") is None
