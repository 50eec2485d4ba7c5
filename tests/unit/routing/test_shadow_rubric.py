"""Reading the judge's verdict and the answers it compares."""

from __future__ import annotations

import orjson
import pytest

from gateway.routing.shadow_rubric import (
    VerdictError,
    answer_text,
    parse_verdict,
    question_text,
    strong_first,
)


def reply(content: object) -> bytes:
    return orjson.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})


@pytest.mark.parametrize(("content", "scores"), [
    ('{"a": 7, "b": 9}', (0.7, 0.9)),
    ('Here you go:\n```json\n{"a": 10, "b": 0.5}\n```', (1.0, 0.05)),
    ('{"note": 1} then {"a": 3, "b": 4}', (0.3, 0.4)),
])
def test_a_verdict_is_read_from_the_reply(content: str, scores: tuple[float, float]) -> None:
    assert parse_verdict(reply(content)) == pytest.approx(scores)


@pytest.mark.parametrize("content", [
    "I prefer the second one.", '{"a": 11, "b": 3}', '{"a": true, "b": 3}', '{"a": 3}', None,
])
def test_an_unusable_verdict_is_an_error(content: object) -> None:
    with pytest.raises(VerdictError):
        parse_verdict(reply(content))


def test_answer_and_question_text() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert answer_text(reply(parts)) == "ab"
    assert answer_text(b"not json") == ""
    payload = {"messages": [{"role": "system", "content": "Be brief."},
                            {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}
    assert question_text(payload) == "system: Be brief.\n\nuser: Hi"


def test_the_answer_order_depends_on_the_request_only() -> None:
    orders = {strong_first(f"req-{n}") for n in range(50)}
    assert orders == {True, False}
    assert strong_first("req-1") == strong_first("req-1")
