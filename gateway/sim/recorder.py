"""RequestRecorder: the last N requests the sim received, for the sim-only GET /sim/requests.

Gateway tests read it to assert what reached the backend: fields passed through untouched,
headers stripped (x-stainless-*), retries that arrived.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: Any  # the decoded JSON, or the text when it is not JSON, or None when empty
    received_at: float  # unix seconds

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "received_at": self.received_at,
        }


def decode_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", "replace")


class RequestRecorder:
    def __init__(self, capacity: int = 100) -> None:
        self._entries: deque[RecordedRequest] = deque(maxlen=capacity)

    def record(
        self,
        method: str,
        path: str,
        query: str,
        raw_headers: list[tuple[bytes, bytes]],
        body: bytes,
    ) -> None:
        headers: dict[str, str] = {}
        for name, value in raw_headers:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self._entries.append(
            RecordedRequest(method, path, query, headers, decode_body(body), time.time())
        )

    def entries(self) -> list[RecordedRequest]:
        """Oldest first."""
        return list(self._entries)

    def clear(self) -> None:
        self._entries.clear()
