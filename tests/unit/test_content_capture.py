"""Opted-in audit content: prompt and answer are kept only with sensitive spans replaced."""

from __future__ import annotations

import orjson

from gateway.classify.standard import standard_classifier
from gateway.routing.content_capture import MAX_CHARS, capture
from gateway.types import Endpoint, Profile, RouteRequest, SensitiveSpan

EMAIL = "jane.roe@northwindtraders.com"
CARD = "4539 1488 0343 6467"
NONE_FOUND = Profile(prompt_tokens=1, max_output_tokens=None)


def _request(text: str) -> RouteRequest:
    return RouteRequest(
        request_id="r1", endpoint=Endpoint.CHAT, model="auto",
        payload={"model": "auto", "messages": [{"role": "user", "content": text}]},
    )


async def test_whole_answer_and_prompt_are_redacted() -> None:
    body = orjson.dumps({"choices": [{"message": {"role": "assistant",
                                                  "content": f"Charged card {CARD}."}}]})
    content = await capture(standard_classifier(), _request(f"Email {EMAIL} please"),
                            NONE_FOUND, body, None)
    assert content is not None
    assert EMAIL not in content.prompt and "Email" in content.prompt
    assert "[EMAIL" in content.prompt.upper() or "<EMAIL" in content.prompt.upper()
    assert CARD not in content.response and content.response.startswith("Charged card")


async def test_streamed_answer_is_joined_from_deltas_then_redacted() -> None:
    pieces = ["Write to ", EMAIL[:8], EMAIL[8:], " today."]
    events = [orjson.dumps({"choices": [{"delta": {"content": p}}]}) for p in pieces]
    events.append(orjson.dumps({"choices": [], "usage": {"prompt_tokens": 3}}))
    content = await capture(standard_classifier(), _request("hi"), NONE_FOUND, None, events)
    assert content is not None
    assert EMAIL not in content.response  # split across chunks, still found whole
    assert content.response.startswith("Write to ") and content.response.endswith(" today.")


async def test_long_texts_are_bounded() -> None:
    content = await capture(standard_classifier(), _request("x " * MAX_CHARS), NONE_FOUND,
                            None, [])
    assert content is not None
    assert len(content.prompt) < MAX_CHARS + 50 and content.prompt.endswith("truncated]")


async def test_what_classification_found_is_masked_in_prompt_and_answer() -> None:
    # A finding only the whole request revealed (a second opinion such as Presidio): the
    # per-string rescan alone would miss this made-up name.
    prompt = "Summarise the file of Zorblax Quint for Zorblax Quintet's team."
    start = prompt.index("Zorblax")
    found = Profile(prompt_tokens=9, max_output_tokens=None, sensitivity=("pii",), spans=(
        SensitiveSpan("person", "pii", start, start + len("Zorblax Quint"), 0.85),))
    body = orjson.dumps({"choices": [{"message": {
        "role": "assistant", "content": "Zorblax Quint joined in 2019."}}]})
    content = await capture(standard_classifier(), _request(prompt), found, body, None)
    assert content is not None
    assert "Zorblax Quint " not in content.prompt and "[PERSON_1]" in content.prompt
    assert "Zorblax Quintet" in content.prompt  # a longer word is not the value
    assert content.response == "[PERSON_1] joined in 2019."
