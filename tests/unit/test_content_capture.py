"""Opted-in audit content: prompt and answer are kept only with sensitive spans replaced."""

from __future__ import annotations

import orjson

from gateway.classify.standard import standard_classifier
from gateway.routing.content_capture import MAX_CHARS, capture
from gateway.types import Endpoint, RouteRequest

EMAIL = "jane.roe@northwindtraders.com"
CARD = "4539 1488 0343 6467"


def _request(text: str) -> RouteRequest:
    return RouteRequest(
        request_id="r1", endpoint=Endpoint.CHAT, model="auto",
        payload={"model": "auto", "messages": [{"role": "user", "content": text}]},
    )


async def test_whole_answer_and_prompt_are_redacted() -> None:
    body = orjson.dumps({"choices": [{"message": {"role": "assistant",
                                                  "content": f"Charged card {CARD}."}}]})
    content = await capture(standard_classifier(), _request(f"Email {EMAIL} please"), body, None)
    assert content is not None
    assert EMAIL not in content.prompt and "Email" in content.prompt
    assert "[EMAIL" in content.prompt.upper() or "<EMAIL" in content.prompt.upper()
    assert CARD not in content.response and content.response.startswith("Charged card")


async def test_streamed_answer_is_joined_from_deltas_then_redacted() -> None:
    pieces = ["Write to ", EMAIL[:8], EMAIL[8:], " today."]
    events = [orjson.dumps({"choices": [{"delta": {"content": p}}]}) for p in pieces]
    events.append(orjson.dumps({"choices": [], "usage": {"prompt_tokens": 3}}))
    content = await capture(standard_classifier(), _request("hi"), None, events)
    assert content is not None
    assert EMAIL not in content.response  # split across chunks, still found whole
    assert content.response.startswith("Write to ") and content.response.endswith(" today.")


async def test_long_texts_are_bounded() -> None:
    content = await capture(standard_classifier(), _request("x " * MAX_CHARS), None, [])
    assert content is not None
    assert len(content.prompt) < MAX_CHARS + 50 and content.prompt.endswith("truncated]")
