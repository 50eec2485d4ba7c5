"""Which payload a backend is sent: the request in a wire API the backend serves.

The client's own body where the backend serves the client's API and the route lets it go as
sent (nothing redacted on the way); else the routed payload (or its redacted copy), in its
own API or translated to the first one the backend serves. Every attempt of the failover
loop asks here, as do shadow calls and engine token counts: nothing else branches on APIs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.errors import InvalidRequest
from gateway.translate.anthropic_request import to_messages_payload
from gateway.translate.messages_extensions import for_openai_family
from gateway.types import ROUTED_ENDPOINTS, Backend, Endpoint, Payload, WireForms
from gateway.upstream import DispatchError

# (routed payload, backend) → the payload in another API. Raises InvalidRequest for what the
# backend cannot take: the request's fault, so no other candidate is tried.
Conversion = Callable[[Payload, Backend], Payload]

# A routed API → the APIs its payload reaches a backend in, in order of preference, and how
# (the extension fields a chat payload may carry are the OpenAI family's to drop).
CONVERSIONS: dict[Endpoint, dict[Endpoint, Conversion]] = {
    Endpoint.CHAT: {Endpoint.CHAT: for_openai_family, Endpoint.MESSAGES: to_messages_payload},
}
# As refusals name them.
API_NAMES = {Endpoint.CHAT: "chat completions", Endpoint.COMPLETIONS: "completions",
             Endpoint.EMBEDDINGS: "embeddings"}


@dataclass(frozen=True, slots=True)
class Outbound:
    """The API a backend is sent a request in; `as_sent`: the client's own body goes."""

    api: Endpoint
    as_sent: bool = False

    def reply_api(self, routed: Endpoint) -> Endpoint:
        """What the reply speaks: the client's own API when its body went as sent, else the
        routed one (a provider answers a translation in it)."""
        return self.api if self.as_sent else routed


# Made once: a frozen dataclass costs half a microsecond to build, on every attempt.
_ROUTED_OUTBOUND = {api: Outbound(api) for api in Endpoint}
_NO_CONVERSIONS: dict[Endpoint, Conversion] = {}


def choose_api(backend: Backend, endpoint: Endpoint, forms: WireForms | None, *,
               as_sent: bool = True) -> Outbound | DispatchError:
    """How `backend` is sent a request routed as `endpoint`, or why it cannot serve it:
    retryable when another candidate may (what the routed payload could not carry), not
    when none of the request's APIs reaches this backend. `as_sent`: the client's own body
    may go (nothing to redact for this backend)."""
    if forms is not None:
        if as_sent and forms.native is not None and forms.native[0] in backend.serves:
            return Outbound(forms.native[0], as_sent=True)
        if forms.untranslatable is not None:
            param, why = forms.untranslatable
            return DispatchError(InvalidRequest(
                f"{why}; backend {backend.name} ({backend.provider}) would need the "
                "translation to chat completions, so it cannot serve this request",
                param=param, code="unsupported_parameter"), retryable=True)
    api = routed_api(backend, endpoint)
    return _ROUTED_OUTBOUND[api] if api is not None else not_served(backend, endpoint)


def routed_api(backend: Backend, endpoint: Endpoint) -> Endpoint | None:
    """The API the routed payload reaches `backend` in: its own where the backend serves it,
    else the first it translates to that the backend serves."""
    if endpoint in backend.serves:
        return endpoint
    return next((api for api in CONVERSIONS.get(endpoint, ()) if api in backend.serves), None)


def not_served(backend: Backend, endpoint: Endpoint) -> DispatchError:
    reachable = [API_NAMES[e] for e in ROUTED_ENDPOINTS if routed_api(backend, e) is not None]
    return DispatchError(InvalidRequest(
        f"backend {backend.name} ({backend.provider}) serves {' and '.join(reachable)} only, "
        f"not /v1/{endpoint.value}", code="unsupported_endpoint"), retryable=False)


def payload_in(outbound: Outbound, backend: Backend, endpoint: Endpoint, routed: Payload,
               forms: WireForms | None) -> Payload:
    """The payload `backend` is sent: the client's own body, or `routed` (the routed payload
    or its redacted copy) with what the front door kept aside put back and converted. A
    translation the backend cannot take raises a DispatchError, not retryable."""
    if outbound.as_sent:
        assert forms is not None and forms.native is not None
        return forms.native[1]
    if forms is not None and forms.extend is not None:
        routed = forms.extend(routed)
    convert = CONVERSIONS.get(endpoint, _NO_CONVERSIONS).get(outbound.api)
    if convert is None:
        return routed
    try:
        return convert(routed, backend)
    except InvalidRequest as exc:
        raise DispatchError(exc, retryable=False) from exc


def routed_payload(backend: Backend, endpoint: Endpoint, routed: Payload,
                   forms: WireForms | None) -> tuple[Endpoint, Payload]:
    """The routed payload in the API `backend` takes it in, for a call beside the request's
    own (a shadow judgement, an engine's token count); DispatchError where there is none."""
    api = routed_api(backend, endpoint)
    if api is None:
        raise not_served(backend, endpoint)
    return api, payload_in(_ROUTED_OUTBOUND[api], backend, endpoint, routed, forms)
