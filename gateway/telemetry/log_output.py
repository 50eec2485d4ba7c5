"""The gateway's own log lines: where they go when nobody configured logging (stderr, beside
uvicorn's, at GATEWAY_LOG_LEVEL; before, only WARNING and above reached stderr through Python's
last-resort handler, so INFO lines such as a client's disconnect were never seen), and the
redaction every one of them passes first."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from typing import Any

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


def redact_gateway_logs(mask: Callable[[str], str]) -> Callable[[], None]:
    """Pass every record a `gateway.*` logger makes, its message and its traceback text, through
    `mask` (the sensitivity detectors' redaction) before any handler sees it: a client's value
    quoted in an error must not reach a log file. Returns the undo (the app's shutdown)."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.name == "gateway" or record.name.startswith("gateway."):
            _mask_record(record, mask)
        return record

    logging.setLogRecordFactory(factory)

    def undo() -> None:
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(previous)

    return undo


def _mask_record(record: logging.LogRecord, mask: Callable[[str], str]) -> None:
    try:
        message = record.getMessage()
    except (TypeError, ValueError):
        return  # arguments that do not fit the format: logging reports that itself
    record.msg, record.args = mask(message), None
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info))
        record.exc_text = mask(text.rstrip("\n"))
