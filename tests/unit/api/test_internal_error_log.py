"""A 500 is logged with its cause and the request id the client was given; a client that
hangs up mid-upload is one INFO line, no traceback."""

from __future__ import annotations

import logging

import pytest
from fastapi import FastAPI
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.testclient import TestClient

from gateway.api.errors import install_error_handlers
from gateway.api.hot_path import HotPathApp
from gateway.errors import InternalError


async def broken(request: Request) -> Response:
    try:
        {}["missing"]  # the bug whose cause must reach the log
    except KeyError as exc:
        raise InternalError("internal error while routing the request") from exc
    raise AssertionError


async def hung_up(request: Request) -> Response:
    raise ClientDisconnect()


def app() -> HotPathApp:
    inner = FastAPI()
    install_error_handlers(inner)
    return HotPathApp(inner, {("POST", "/broken"): broken, ("POST", "/gone"): hung_up})


def test_an_internal_error_is_logged_with_its_cause_and_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="gateway"), TestClient(app()) as client:
        reply = client.post("/broken")
    assert reply.status_code == 500
    assert reply.json()["error"]["message"] == "internal error while routing the request"
    request_id = reply.headers["x-request-id"]
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert request_id in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is KeyError


def test_a_client_disconnect_is_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="gateway"), TestClient(app()) as client:
        with pytest.raises(AssertionError, match="did not receive any response"):
            client.post("/gone")  # nothing is sent to a client that is gone
    [record] = caplog.records
    assert record.levelno == logging.INFO and record.exc_info is None
    assert "disconnected" in record.getMessage() and "req_" in record.getMessage()
