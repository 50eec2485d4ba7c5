"""A cap on the request-body bytes held at once, over every request of the process. Each
body is bounded by GATEWAY_MAX_BODY_BYTES and must arrive within
GATEWAY_BODY_READ_TIMEOUT_S, but many large requests together would still hold that much
each (and a few times more while it is parsed and counted): past
GATEWAY_MAX_INFLIGHT_BODY_BYTES a new body is refused at once with a 503 the SDKs retry,
instead of growing memory without bound. A body's bytes count from the moment it starts to
arrive until its request has been answered (streams: until the stream ends)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from starlette.requests import Request

from gateway.errors import ServerBusy

RETRY_AFTER_S = 1
# The holds of the request being served, set by releasing_holds() around it: the handler
# runs in that context, so what it appends here is released when the response is over.
_HOLDS: ContextVar[list[BodyHold] | None] = ContextVar("body_holds", default=None)


def body_gate(request: Request) -> BodyGate:
    """The process's gate, kept beside the app's components (it belongs to the HTTP edge)."""
    return request.app.state.body_gate  # type: ignore[no-any-return]


class BodyGate:
    def __init__(self, cap_bytes: int) -> None:
        self._cap = cap_bytes
        self._held = 0

    @property
    def held(self) -> int:
        return self._held

    def hold(self) -> BodyHold:
        holds = _HOLDS.get()
        if holds is None:  # nothing would ever give its bytes back
            raise RuntimeError("a body hold needs releasing_holds() around its request")
        hold = BodyHold(self)
        holds.append(hold)
        return hold

    def _take(self, size: int) -> None:
        if size > 0 and self._held + size > self._cap:
            raise ServerBusy(
                "The gateway is holding too many large request bodies at once; retry shortly.",
                headers={"retry-after": str(RETRY_AFTER_S)})
        self._held += size

    def _give(self, size: int) -> None:
        self._held = max(0, self._held - size)


class BodyHold:
    """What one request holds; released once, by releasing_holds() or on a refusal."""

    def __init__(self, gate: BodyGate) -> None:
        self._gate = gate
        self._size = 0

    def take(self, size: int) -> None:
        self._gate._take(size)
        self._size += size

    def release(self) -> None:
        self._gate._give(self._size)
        self._size = 0


@contextmanager
def releasing_holds() -> Iterator[None]:
    """Around one request, response included: every body hold taken inside is given back
    at the end, whatever path the request took out (answer, error, stream end, hang-up)."""
    holds: list[BodyHold] = []
    token = _HOLDS.set(holds)
    try:
        yield
    finally:
        _HOLDS.reset(token)
        for hold in holds:
            hold.release()
