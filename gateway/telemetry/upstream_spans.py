"""The upstream call's CLIENT span: current (the OpenTelemetry context) while the request is
sent, so the providers' headers carry its W3C `traceparent`; ended with the reply, or, for a
stream, by the request's recorder when the stream ends."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol, TypeVar

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, Status, StatusCode, set_span_in_context

from gateway.telemetry.genai_attributes import dispatch_error_type, usage_attributes
from gateway.types import Backend, Endpoint, Payload
from gateway.upstream import DispatchError, Provider, UpstreamReply, UpstreamStream

T = TypeVar("T")


class AttemptSpans(Protocol):
    def attempt(self, backend: Backend) -> Span: ...

    def streaming(self, span: Span) -> None: ...


class TracedProvider:
    """A provider whose calls are CLIENT spans, current while the request is sent."""

    __slots__ = ("_inner", "_spans")

    def __init__(self, inner: Provider, spans: AttemptSpans) -> None:
        self._inner = inner
        self._spans = spans

    async def complete(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamReply:
        span, reply = await self._attempt(
            backend, self._inner.complete(backend, endpoint, payload, request_id)
        )
        span.set_attribute("http.response.status_code", 200)
        if reply.usage is not None:
            span.set_attributes(usage_attributes(reply.usage))
        span.end()
        return reply

    async def stream(
        self, backend: Backend, endpoint: Endpoint, payload: Payload, request_id: str
    ) -> UpstreamStream:
        span, stream = await self._attempt(
            backend, self._inner.stream(backend, endpoint, payload, request_id)
        )
        self._spans.streaming(span)  # ends when the stream does
        return stream

    async def _attempt(self, backend: Backend, call: Awaitable[T]) -> tuple[Span, T]:
        """Run one upstream call with its CLIENT span current (so `traceparent` goes out);
        a failure ends the span with its error type."""
        span = self._spans.attempt(backend)
        token = otel_context.attach(set_span_in_context(span))
        try:
            result = await call
        except BaseException as exc:
            _end_failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
        span.set_attribute("gen_ai.response.model", backend.model)
        return span, result

    async def aclose(self) -> None:
        """The provider is the lifespan's to close, not one request's."""


def mark_error(span: Span, error_type: str, message: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))


def _end_failed(span: Span, exc: BaseException) -> None:
    """A failed attempt (or one the client's leaving cut short)."""
    message = type(exc).__name__
    if isinstance(exc, DispatchError):
        message = exc.error.message
        if exc.upstream_status is not None:
            span.set_attribute("http.response.status_code", exc.upstream_status)
        span.set_attribute("gateway.retryable", exc.retryable)
    mark_error(span, dispatch_error_type(exc), message)
    span.end()
