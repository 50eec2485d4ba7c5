"""A request's payload beyond the one it is routed in: what its front door built with
gateway/translate, which alone reads it (translate/wire.py picks the payload each backend is
sent, by the wire APIs the backend serves)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.types import Endpoint, Payload


@dataclass(frozen=True, slots=True)
class WireForms:
    """`native`: the client's own body and its API (a Responses request), which a backend that
    serves that API is sent as it is. `untranslatable`: (parameter, why) for what the client
    asked that the routed payload cannot carry, so only such a backend may serve it.
    `extend`: puts back into the routed payload (or its redacted copy) what the client's API
    has beyond it (a Claude client's thinking config, beta header and signed thinking
    blocks), for a translation to read."""

    native: tuple[Endpoint, Payload] | None = None
    untranslatable: tuple[str, str] | None = None
    extend: Callable[[Payload], Payload] | None = None
