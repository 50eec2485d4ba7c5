"""Which API a Responses request reaches a backend in: as such (a backend that serves the
Responses API, on a route that does not redact), else as its chat translation, which a
request carrying what chat cannot express must not be sent as."""

from __future__ import annotations

from gateway.errors import InvalidRequest
from gateway.types import Backend, RouteDecision, RouteRequest, Zone
from gateway.upstream import DispatchError


def passes_through(request: RouteRequest, decision: RouteDecision, backend: Backend) -> bool:
    """A Responses request goes as such to a backend that serves the Responses API, unless
    the route redacts it on the way out (redaction rewrites the chat translation)."""
    if request.responses_payload is None or not backend.responses_native:
        return False
    return not decision.redact or backend.zone == Zone.SELF_HOSTED


def cannot_serve(request: RouteRequest, decision: RouteDecision,
                 backend: Backend) -> DispatchError | None:
    """A Responses request with what chat completions cannot carry, for a backend that would
    need the translation: the next candidate may serve it; if none does, this is the 400."""
    if request.responses_only is None or passes_through(request, decision, backend):
        return None
    param, why = request.responses_only
    return DispatchError(InvalidRequest(
        f"{why}; backend {backend.name} ({backend.provider}) would need the translation to "
        "chat completions, so it cannot serve this request",
        param=param, code="unsupported_parameter"), retryable=True)
