"""Metrics and traces: built first and closed last, so every other part's start and stop
is counted and traced."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass

from gateway.assembly.tasks import keep_running
from gateway.audit.writer import AuditWriter
from gateway.settings import Settings
from gateway.telemetry.metrics import GatewayMetrics
from gateway.telemetry.multiprocess import process_exited
from gateway.telemetry.otlp import start_tracing, traces_url
from gateway.telemetry.tracing import Tracing


@dataclass(frozen=True, slots=True)
class Observability:
    metrics: GatewayMetrics
    tracing: Tracing


def open_observability(stack: AsyncExitStack, settings: Settings,
                       version: str) -> Observability:
    metrics = GatewayMetrics()
    if metrics.multiprocess_dir is not None:
        stack.callback(process_exited, metrics.multiprocess_dir)  # gauges leave the merged view
    tracing = start_tracing(traces_url(  # off (no tracer provider) without an endpoint
        settings.otel_exporter_otlp_endpoint, settings.otel_exporter_otlp_traces_endpoint,
        sdk_disabled=settings.otel_sdk_disabled,
    ), settings.otel_service_name, version)

    async def export_queued_spans() -> None:
        await asyncio.to_thread(tracing.shutdown)

    stack.push_async_callback(export_queued_spans)
    return Observability(metrics, tracing)


def publish_metrics(stack: AsyncExitStack, metrics: GatewayMetrics, audit: AuditWriter) -> None:
    """With several worker processes, each publishes its gauges for the merged /metrics."""
    if metrics.multiprocess_dir is not None:
        keep_running(stack, metrics.publish_forever(lambda: audit.backlog), "metrics-publish")
