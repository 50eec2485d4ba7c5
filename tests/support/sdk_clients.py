"""The SDK clients a test opened through a gateway fixture, closed when the test ends.

An openai or anthropic client refers to itself (its resources hold the client), so one left
open is freed only by the cyclic garbage collector, which finalizes the client and its pooled
socket in no fixed order: when the socket goes first, an "unclosed socket" ResourceWarning fails
whichever later test happened to trigger that collection.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Protocol, TypeVar

import pytest


class Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=Closable)


class OpenedClients:
    def __init__(self) -> None:
        self._clients: list[Closable] = []

    def track(self, client: C) -> C:
        self._clients.append(client)
        return client

    def close(self) -> None:
        while self._clients:
            self._clients.pop().close()


@pytest.fixture(autouse=True)
def close_opened_clients(request: pytest.FixtureRequest) -> Iterator[None]:
    """Close the SDK clients the test opened through any gateway fixture it used (Gateway, Rig
    or another with `opened`): left to the garbage collector they leak sockets. Then collect
    (a few ms), so that anything else the test left unclosed fails this test, not a later one."""
    yield
    for value in request.node.funcargs.values():
        opened = getattr(value, "opened", None)
        if isinstance(opened, OpenedClients):
            opened.close()
    gc.collect()
