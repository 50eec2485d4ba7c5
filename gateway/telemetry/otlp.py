"""Where traces go: the OTLP/HTTP (protobuf) exporter behind a batching span processor, built
once by the lifespan when an endpoint is configured, after the standard OTEL_* conventions."""

from __future__ import annotations

from gateway.telemetry.tracing import TRACER_NAME, Tracing

TRACES_PATH = "/v1/traces"


def traces_url(
    endpoint: str | None, traces_endpoint: str | None, *, sdk_disabled: bool = False
) -> str | None:
    """The URL spans are POSTed to, or None (tracing off). As the OTLP exporter spec says:
    the signal-specific endpoint is used as is; the generic one gets `/v1/traces` appended."""
    if sdk_disabled:
        return None
    if traces_endpoint:
        return traces_endpoint
    if endpoint:
        return endpoint.rstrip("/") + TRACES_PATH
    return None


def start_tracing(url: str | None, service_name: str, service_version: str) -> Tracing:
    """Off (`Tracing()`) without a URL: no tracer provider, exporter or thread is created.
    The exporter's other settings (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION) and the
    sampler (OTEL_TRACES_SAMPLER) come from the environment as the SDK reads them."""
    if url is None:
        return Tracing()
    # Imported here: the exporter brings protobuf and requests, which a gateway that does
    # not trace need not load.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create(
        {SERVICE_NAME: service_name, SERVICE_VERSION: service_version}
    ))
    # Batched and exported from the processor's own thread: the event loop only appends
    # finished spans to a bounded queue (full: spans are dropped, requests never wait).
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    return Tracing(provider.get_tracer(TRACER_NAME, service_version), provider)
