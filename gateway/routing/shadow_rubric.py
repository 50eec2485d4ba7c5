"""The fixed rubric shadow judging asks the judge backend to apply, and reading its verdict.

Pure: the judge's request is built from the original chat request and the two answers, and
its reply parsed into two scores in [0, 1]. The answers go in as `<answer_a>` and
`<answer_b>` in an order fixed by the request id (so neither the served nor the strong
answer is always first, against a judge's position bias).
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import orjson

from gateway.types import Payload

RUBRIC = (
    "You grade two answers to the same request. Score each from 0 to 10: 10 is correct, "
    "complete and directly useful; 5 is partly right or missing something that matters; 0 "
    "is wrong, harmful or off-topic. Judge substance, not length or style. Reply with JSON "
    'only: {"a": <score of answer_a>, "b": <score of answer_b>}.'
)
JUDGE_MAX_TOKENS = 64
SCALE = 10.0
_VERDICT = re.compile(r"\{[^{}]*\}")


class VerdictError(ValueError):
    """The judge's reply holds no usable pair of scores."""


def strong_first(request_id: str) -> bool:
    """Whether the strong answer is shown as answer_a for this request."""
    return bool(zlib.crc32(request_id.encode()) & 1)


def question_text(payload: Payload) -> str:
    """The conversation as the judge reads it: one `role: text` paragraph per message."""
    lines = []
    for message in payload.get("messages") or []:
        if isinstance(message, dict):
            lines.append(f"{message.get('role', 'user')}: {_content_text(message.get('content'))}")
    return "\n\n".join(lines)


def judge_payload(question: str, answer_a: str, answer_b: str) -> Payload:
    user = (f"<request>\n{question}\n</request>\n\n<answer_a>\n{answer_a}\n</answer_a>\n\n"
            f"<answer_b>\n{answer_b}\n</answer_b>")
    return {
        "messages": [{"role": "system", "content": RUBRIC}, {"role": "user", "content": user}],
        "temperature": 0,
        "max_tokens": JUDGE_MAX_TOKENS,
    }


def answer_text(body: bytes) -> str:
    """The assistant's text in an OpenAI chat completion body ("" when it has none)."""
    try:
        data = orjson.loads(body)
        message = data["choices"][0]["message"]
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        return ""
    return _content_text(message.get("content")) if isinstance(message, dict) else ""


def parse_verdict(body: bytes) -> tuple[float, float]:
    """(score of answer_a, score of answer_b), each in [0, 1]."""
    text = answer_text(body)
    for candidate in _VERDICT.findall(text):
        try:
            found = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        if isinstance(found, dict):
            a, b = found.get("a"), found.get("b")
            if _is_score(a) and _is_score(b):
                return a / SCALE, b / SCALE
    raise VerdictError(f"no {{\"a\", \"b\"}} scores from 0 to 10 in the judge's reply: "
                       f"{text[:200]!r}")


def _is_score(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and 0 <= value <= SCALE)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones, in order
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
