"""SIGHUP re-reading where a loop cannot take signal handlers: offered nowhere, said once."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from gateway.secret_rotation import on_hangup


def test_off_the_main_thread_sighup_is_not_offered_and_the_log_says_so(
        caplog: pytest.LogCaptureFixture) -> None:
    outcome: list[object] = []

    async def install() -> None:
        async def reread() -> None:
            return None
        undo = on_hangup(reread)
        undo()  # the no-op undo must be callable
        outcome.append(undo)

    def run() -> None:
        asyncio.run(install())

    with caplog.at_level(logging.INFO, logger="gateway.secret_rotation"):
        worker = threading.Thread(target=run)
        worker.start()
        worker.join(10)
    assert len(outcome) == 1
    assert any("SIGHUP does not re-read secrets" in r.getMessage() for r in caplog.records)
