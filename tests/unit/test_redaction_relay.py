"""Restoring redacted values in what an external backend answered."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from gateway.classify.redaction import redact
from gateway.routing.redaction_relay import RestoringStream, restore_body
from gateway.types import SensitiveSpan

TEXT = "mail bob.smith@gmail.com now"
SPAN = SensitiveSpan("email", "pii", 5, 24, 0.99)
REDACTED, MAPPING = redact(TEXT, [SPAN])


def test_the_redacted_text_has_no_value_and_a_typed_placeholder() -> None:
    assert "bob.smith" not in REDACTED and "[EMAIL_1]" in REDACTED


def test_whole_bodies_are_restored_in_content_text_and_tool_arguments() -> None:
    body = orjson.dumps({"choices": [
        {"index": 0, "message": {"content": "sent to [EMAIL_1]", "tool_calls": [
            {"function": {"name": "send", "arguments": '{"to": "[EMAIL_1]"}'}}]}},
        {"index": 1, "text": "[EMAIL_1]!"}]})
    out = orjson.loads(restore_body(body, MAPPING))
    assert out["choices"][0]["message"]["content"] == "sent to bob.smith@gmail.com"
    assert "bob.smith@gmail.com" in out["choices"][0]["message"]["tool_calls"][0]["function"][
        "arguments"]
    assert out["choices"][1]["text"] == "bob.smith@gmail.com!"


class Scripted:
    def __init__(self, events: list[bytes]) -> None:
        self.first, *self._rest = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self._rest:
            yield event

    async def aclose(self) -> None:
        pass


def chunk(content: str, finish: str | None = None) -> bytes:
    return orjson.dumps({"choices": [{"index": 0, "delta": {"content": content},
                                      "finish_reason": finish}]})


async def test_a_placeholder_split_across_chunks_is_restored() -> None:
    pieces = ["Write to [EM", "AIL", "_1", "] today [", "not a placeholder]"]
    events = [chunk(p) for p in pieces] + [chunk("", "stop")]
    stream = RestoringStream(Scripted(events), MAPPING)
    out = [stream.first] + [e async for e in stream]
    text = "".join(orjson.loads(e)["choices"][0]["delta"]["content"] for e in out)
    assert text == "Write to bob.smith@gmail.com today [not a placeholder]"
