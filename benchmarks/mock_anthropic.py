"""The benchmark mock's Anthropic Messages dialect: a `message` reply and the named-event stream
(message_start, ping, one text block of deltas, message_delta, message_stop), pre-encoded
where possible so the mock costs the same per request whichever dialect it speaks.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

INPUT_TOKENS = 12  # the same prompt size the OpenAI dialect reports


def event(kind: str, data: dict[str, object]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps({"type": kind, **data}) + \
        b"\n\n"


def _usage(output_tokens: int) -> dict[str, int]:
    return {"input_tokens": INPUT_TOKENS, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0, "output_tokens": output_tokens}


def message_body(message_id: str, model: str, text: str, output_tokens: int) -> bytes:
    return orjson.dumps({
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": _usage(output_tokens),
    })


def stream_script(
    message_id: str, model: str, token_text: Callable[[int], str], tokens: int
) -> tuple[list[bytes], Callable[[int], bytes], list[bytes]]:
    """(events before the first token, the event for token i, events after the last)."""
    start = {"id": message_id, "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None, "stop_sequence": None, "usage": _usage(1)}
    head = [event("message_start", {"message": start}), event("ping", {}),
            event("content_block_start", {"index": 0,
                                          "content_block": {"type": "text", "text": ""}})]

    def token(i: int) -> bytes:
        return event("content_block_delta", {
            "index": 0, "delta": {"type": "text_delta", "text": token_text(i)}})

    tail = [event("content_block_stop", {"index": 0}),
            event("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                    "usage": {"output_tokens": tokens}}),
            event("message_stop", {})]
    return head, token, tail
