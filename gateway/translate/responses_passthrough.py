"""Front door: a Responses API reply or stream event from a backend that serves /v1/responses
natively, made the gateway's own (pure).

The upstream kept nothing (`store: false`) and never saw the gateway's conversation ids, so
the response takes the gateway's id, `store`, `previous_response_id` and `metadata`, and the
requested model name (as translated replies do). A stream that breaks ends with `error` and
`response.failed`, as a translated one does. The response body that relays such a stream is
gateway/api/responses_passthrough.py.
"""

from __future__ import annotations

from typing import Any

import orjson

LIFECYCLE_END = frozenset({"response.completed", "response.incomplete", "response.failed"})


def adopt(response: dict[str, Any], response_id: str, echo: dict[str, Any], model: str,
          *, store: bool) -> dict[str, Any]:
    response["id"] = response_id
    response["model"] = model
    response["store"] = store
    response["previous_response_id"] = echo.get("previous_response_id")
    response["metadata"] = echo.get("metadata") or {}
    return response


def event_frame(kind: str, data: bytes) -> bytes:
    """A Responses stream event as SSE: the relay's data-only frame gets its `event:` line."""
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def failure_frames(error: dict[str, Any], snapshot: dict[str, Any], response_id: str,
                   sequence: int, *, announced: bool = False) -> bytes:
    """How a broken stream ends: an `error` event (unless the upstream `announced` it), then
    `response.failed` with the last response snapshot, numbered from `sequence`."""
    code = error.get("code") or "server_error"
    message = error.get("message") or "the upstream stream failed"
    out = b""
    if not announced:
        out = event_frame("error", orjson.dumps({
            "type": "error", "sequence_number": sequence, "code": code,
            "message": message, "param": error.get("param")}))
        sequence += 1
    response = {**snapshot, "id": response_id, "status": "failed",
                "error": {"code": code, "message": message}}
    return out + event_frame("response.failed", orjson.dumps({
        "type": "response.failed", "sequence_number": sequence, "response": response}))
