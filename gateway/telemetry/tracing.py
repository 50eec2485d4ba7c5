"""OpenTelemetry traces of the request path: a SERVER span per request, with child spans for
classify, decide, reserve, each upstream attempt (CLIENT) and settle.

Off unless an OTLP endpoint is configured. Off means no tracer provider at all, and the
request path gets `NO_SPANS`, one shared recorder whose methods return at once: no span
objects, no attribute dicts. On, each request gets a `RequestSpans`; the upstream call's span
is the current OpenTelemetry context while the request is sent, which is how the providers'
headers carry its W3C `traceparent` (providers/http_pool.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from gateway.errors import GatewayError
from gateway.telemetry.genai_attributes import (
    Attributes,
    decision_attributes,
    operation_name,
    outcome_attributes,
    profile_attributes,
    request_attributes,
    reservation_attributes,
    span_name,
    upstream_attributes,
    usage_attributes,
)
from gateway.telemetry.upstream_spans import TracedProvider, mark_error
from gateway.types import (
    Backend,
    Profile,
    RouteDecision,
    RouteRequest,
    TenantContext,
    Usage,
)
from gateway.upstream import Provider

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

TRACER_NAME = "gateway"


class Held(Protocol):
    """A budget reservation, as far as tracing cares."""

    @property
    def cost_micro_usd(self) -> int: ...


class Admission(Protocol):
    """A budget admission: what it held back (None: unmetered, the store was down)."""

    @property
    def reservation(self) -> Held | None: ...


A = TypeVar("A", bound=Admission)
T = TypeVar("T")


class Spans(Protocol):
    """One request's span recorder. The step methods hand their argument back, so the
    request path can mark a step's end where it already assigns the step's result."""

    def classified(self, profile: Profile) -> Profile: ...

    def decided(self, decision: RouteDecision) -> RouteDecision: ...

    def reserved(self, admitted: A) -> A: ...

    def call(self, provider: Provider) -> Provider: ...

    def settling(self) -> None: ...

    def settled(self, backend: Backend | None, usage: Usage, cost_micro_usd: int,
                error: GatewayError | None, cancelled: bool, ttft_s: float | None) -> int: ...


class NoSpans:
    """Tracing off: every method returns at once."""

    __slots__ = ()

    def classified(self, profile: Profile) -> Profile:
        return profile

    def decided(self, decision: RouteDecision) -> RouteDecision:
        return decision

    def reserved(self, admitted: A) -> A:
        return admitted

    def call(self, provider: Provider) -> Provider:
        return provider

    def settling(self) -> None:
        pass

    def settled(self, backend: Backend | None, usage: Usage, cost_micro_usd: int,
                error: GatewayError | None, cancelled: bool, ttft_s: float | None) -> int:
        return cost_micro_usd


NO_SPANS = NoSpans()


class Tracing:
    """The request path's door to tracing; `Tracing()` is off."""

    def __init__(
        self, tracer: Tracer | None = None, provider: TracerProvider | None = None
    ) -> None:
        self._tracer = tracer
        self._provider = provider
        self._propagator = TraceContextTextMapPropagator()

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def begin(
        self, tenant: TenantContext, request: RouteRequest, headers: Mapping[str, str] | None
    ) -> Spans:
        """A request's recorder; its server span continues the client's W3C trace context
        (`traceparent` in `headers`) when there is one."""
        if self._tracer is None:
            return NO_SPANS
        parent = self._propagator.extract(headers) if headers is not None else None
        return RequestSpans(self._tracer, tenant, request, parent)

    def shutdown(self) -> None:
        """Export what is still queued, then stop (blocks: call it off the event loop)."""
        if self._provider is not None:
            self._provider.shutdown()


class RequestSpans:
    """Tracing on: the spans of one request. Steps are recorded when they end, from the end
    of the one before (decide's span therefore includes gathering its inputs: the engines'
    own prompt counts and the fleet snapshot; reserve's, the tenant's limits)."""

    __slots__ = ("_attempts", "_call", "_call_started_ns", "_call_started_s", "_context",
                 "_mark_ns", "_next_step", "_operation", "_recording", "_reserved", "_rule",
                 "_server", "_settle_ns", "_started_s", "_tracer")

    def __init__(
        self,
        tracer: Tracer,
        tenant: TenantContext,
        request: RouteRequest,
        parent: otel_context.Context | None,
    ) -> None:
        self._tracer = tracer
        self._operation = operation_name(request.endpoint)
        self._mark_ns = time.time_ns()
        self._started_s = time.perf_counter()
        self._server = tracer.start_span(
            span_name(self._operation, request.model), context=parent, kind=SpanKind.SERVER,
            attributes=request_attributes(tenant, request), start_time=self._mark_ns,
        )
        self._context = set_span_in_context(self._server)
        # Sampled out (OTEL_TRACES_SAMPLER): only the upstream's trace context is kept.
        self._recording = self._server.is_recording()
        self._next_step: str | None = "classify"
        self._rule: str | None = None
        self._reserved = False
        self._attempts = 0
        self._call: Span | None = None  # a stream's upstream span, open until it ends
        self._call_started_s = 0.0
        self._call_started_ns = 0
        self._settle_ns = 0

    def _step(self, name: str, describe: Callable[[T], Attributes], value: T,
              next_step: str | None) -> None:
        end = time.time_ns()
        if self._recording:
            span = self._tracer.start_span(name, context=self._context, start_time=self._mark_ns,
                                           attributes=describe(value))
            span.end(end_time=end)
        self._mark_ns, self._next_step = end, next_step

    def classified(self, profile: Profile) -> Profile:
        self._step("classify", profile_attributes, profile, "decide")
        return profile

    def decided(self, decision: RouteDecision) -> RouteDecision:
        self._rule = decision.rule
        self._step("decide", decision_attributes, decision, "reserve")
        return decision

    def reserved(self, admitted: A) -> A:
        held = admitted.reservation
        self._reserved = held is not None
        self._step("reserve", reservation_attributes,
                   held.cost_micro_usd if held is not None else None, None)
        return admitted

    def call(self, provider: Provider) -> Provider:
        return TracedProvider(provider, self)

    def attempt(self, backend: Backend) -> Span:
        """The CLIENT span of one attempt at one backend."""
        self._attempts += 1
        self._call_started_s = time.perf_counter()
        self._call_started_ns = time.time_ns()
        return self._tracer.start_span(
            span_name(self._operation, backend.model), context=self._context,
            kind=SpanKind.CLIENT,
            attributes=upstream_attributes(backend, self._operation) if self._recording else None,
            start_time=self._call_started_ns,
        )

    def streaming(self, span: Span) -> None:
        """A stream opened: its span stays open until the stream ends."""
        span.set_attribute("http.response.status_code", 200)
        self._call = span

    def settling(self) -> None:
        self._settle_ns = time.time_ns()

    def settled(self, backend: Backend | None, usage: Usage, cost_micro_usd: int,
                error: GatewayError | None, cancelled: bool, ttft_s: float | None) -> int:
        """Close every span: a step that failed, a stream's upstream call, settle (which began
        at `settling()`), and the request's server span."""
        if not self._recording:
            return cost_micro_usd
        settle_ns = self._settle_ns or time.time_ns()
        if self._next_step is not None and error is not None:
            failed = self._tracer.start_span(self._next_step, context=self._context,
                                             start_time=self._mark_ns)
            mark_error(failed, error.error_type, error.message)
            failed.end(end_time=settle_ns)
        if self._call is not None:
            self._end_stream(self._call, usage, error, cancelled, ttft_s, settle_ns)
            self._call = None
        settle = self._tracer.start_span("settle", context=self._context, start_time=settle_ns,
                                         attributes={"gateway.cost_micro_usd": cost_micro_usd,
                                                     "gateway.settled": self._reserved})
        settle.end()
        server = self._server
        server.set_attributes(outcome_attributes(
            backend, self._rule, usage, cost_micro_usd, attempts=self._attempts, error=error,
            cancelled=cancelled,
        ))
        if ttft_s is not None:
            server.set_attribute("gen_ai.response.time_to_first_chunk", ttft_s)
        if error is not None and not cancelled:
            server.set_status(Status(StatusCode.ERROR, error.message))
        server.end()
        return cost_micro_usd

    def _end_stream(self, span: Span, usage: Usage, error: GatewayError | None,
                    cancelled: bool, ttft_s: float | None, end_ns: int) -> None:
        span.set_attributes(usage_attributes(usage))
        if ttft_s is not None:
            # ttft_s counts from the request's arrival; the upstream's from this attempt's send.
            upstream_ttft_s = max(0.0, self._started_s + ttft_s - self._call_started_s)
            span.set_attribute("gen_ai.response.time_to_first_chunk", upstream_ttft_s)
            span.add_event("gen_ai.first_chunk",
                           timestamp=self._call_started_ns + int(upstream_ttft_s * 1e9))
        if cancelled:
            span.set_attribute("gateway.outcome", "client_disconnected")
        elif error is not None:
            mark_error(span, error.error_type, error.message)
        span.end(end_time=end_ns)
