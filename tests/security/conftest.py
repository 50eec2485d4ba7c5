"""The security suite drives the same real gateway as the e2e tests: uvicorn on 127.0.0.1 in
front of simulated vLLM servers, with the admin key and body limit from tests/e2e."""

from __future__ import annotations

from tests.e2e.conftest import gateway, gw
from tests.support.sdk_clients import close_opened_clients

__all__ = ["close_opened_clients", "gateway", "gw"]
