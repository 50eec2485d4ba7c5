"""Prometheus gauges for every backend's live state, read from the fleet view when scraped
(a custom collector: nothing to keep in sync on the request path)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

CIRCUIT_STATES = ("closed", "half_open", "open")
# fleet view field → (metric name, help)
GAUGES = {
    "running": ("gateway_backend_running", "Requests running in the engine (last scrape)"),
    "waiting": ("gateway_backend_waiting", "Requests waiting in the engine (last scrape)"),
    "running_blended": ("gateway_backend_running_blended",
                        "Running requests including the gateway's sends since the scrape"),
    "waiting_blended": ("gateway_backend_waiting_blended",
                        "Waiting requests including the gateway's sends since the scrape"),
    "kv_usage": ("gateway_backend_kv_usage", "KV-cache usage, 0 to 1 (last scrape)"),
    "kv_capacity_tokens": ("gateway_backend_kv_capacity_tokens", "KV-cache capacity in tokens"),
    "kv_free_tokens": ("gateway_backend_kv_free_tokens",
                       "Free KV tokens less the gateway's reservations since the scrape"),
    "prefix_hit_rate": ("gateway_backend_prefix_hit_rate", "Prefix-cache hit rate, 0 to 1"),
    "prompt_tokens_per_s": ("gateway_backend_prompt_tokens_per_second", "Prefill throughput"),
    "generation_tokens_per_s": ("gateway_backend_generation_tokens_per_second",
                                "Decode throughput"),
    "preemptions_per_s": ("gateway_backend_preemptions_per_second", "Engine preemptions"),
    "ttft_s": ("gateway_backend_ttft_seconds", "Gateway-measured TTFT (EWMA)"),
    "tpot_s": ("gateway_backend_tpot_seconds", "Gateway-measured time per output token (EWMA)"),
    "in_flight": ("gateway_backend_in_flight", "The gateway's requests in flight"),
    "error_rate": ("gateway_backend_error_rate", "Share of failed attempts (EWMA)"),
    "scrape_age_s": ("gateway_backend_scrape_age_seconds", "Age of the last good scrape"),
    "tokens_per_hour": ("gateway_backend_tokens_per_hour", "Measured throughput, rolling"),
    "effective_usd_per_mtok": ("gateway_backend_effective_usd_per_mtok",
                               "Self-hosted price: GPU cost / measured tokens"),
}


class FleetCollector(Collector):
    def __init__(self, view: Callable[[], dict[str, dict[str, Any]]]) -> None:
        self._view = view

    def collect(self) -> Iterator[GaugeMetricFamily]:
        view = self._view()
        for field, (name, help_text) in GAUGES.items():
            family = GaugeMetricFamily(name, help_text, labels=["backend"])
            for backend, record in view.items():
                value = record.get(field)
                if isinstance(value, int | float):
                    family.add_metric([backend], float(value))
            yield family
        circuit = GaugeMetricFamily(
            "gateway_backend_circuit_state", "1 for the circuit's current state",
            labels=["backend", "state"],
        )
        for backend, record in view.items():
            for state in CIRCUIT_STATES:
                circuit.add_metric([backend, state], 1.0 if record.get("circuit") == state else 0.0)
        yield circuit
