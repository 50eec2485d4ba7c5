"""The cap on request-body bytes held at once."""

from __future__ import annotations

import pytest

from gateway.api.body_gate import BodyGate, releasing_holds
from gateway.errors import ServerBusy


def test_bodies_past_the_cap_are_refused_until_held_ones_are_released() -> None:
    gate = BodyGate(100)
    with releasing_holds():
        first = gate.hold()
        first.take(60)
        second = gate.hold()
        with pytest.raises(ServerBusy) as refused:
            second.take(50)
        assert refused.value.status == 503 and refused.value.code == "server_busy"
        assert refused.value.headers()["retry-after"] == "1"
        assert refused.value.headers()["x-should-retry"] == "true"
        second.take(40)
        assert gate.held == 100
    assert gate.held == 0  # the request is over: everything it held is back


def test_holds_are_released_when_the_request_fails() -> None:
    gate = BodyGate(100)
    with pytest.raises(RuntimeError), releasing_holds():
        gate.hold().take(70)
        raise RuntimeError("the handler failed")
    assert gate.held == 0


def test_a_release_gives_back_only_once() -> None:
    gate = BodyGate(100)
    with releasing_holds():  # another request, still in flight
        gate.hold().take(30)
        with releasing_holds():
            hold = gate.hold()
            hold.take(50)
            hold.release()
            assert gate.held == 30
        assert gate.held == 30  # the other request's bytes are still held
    assert gate.held == 0


def test_a_hold_outside_a_request_scope_is_refused() -> None:
    with pytest.raises(RuntimeError, match="releasing_holds"):
        BodyGate(100).hold()
