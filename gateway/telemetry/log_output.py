"""Where the gateway's own log lines go when nobody configured logging: stderr, beside
uvicorn's, at GATEWAY_LOG_LEVEL. Without this only WARNING and above reached stderr (Python's
last-resort handler, message text only), so INFO lines such as a client's disconnect or a
refused malformed request were never seen."""

from __future__ import annotations

import logging
import sys

FORMAT = "%(levelname)s:     %(name)s: %(message)s"  # aligned with uvicorn's "INFO:     "


def send_gateway_logs_to_stderr(level: str) -> None:
    """Attach one stderr handler to the `gateway` logger, unless the process (an embedding
    application, a test runner) has configured logging itself."""
    gateway = logging.getLogger("gateway")
    if logging.getLogger().handlers or gateway.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    gateway.addHandler(handler)
    gateway.setLevel(level.upper())
