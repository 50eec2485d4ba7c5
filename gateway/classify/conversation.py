"""A chat's complexity in context: a follow-up in a hard conversation is a hard request.

"Thanks, now extend it to dividends" reads as small talk alone, yet it asks the model to
carry on a derivation only the strong model could start. So a chat's complexity is the
highest of its last user message and the `EARLIER_TURNS` user messages before it, each
scored alone (as it was when it was the last one); the turn it came from goes on the profile.
Earlier turns are usually scored already, by an earlier request of the same conversation:
their scores are remembered per process, by a digest of the text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

from gateway.classify.payload_text import content_text
from gateway.types import Payload

EARLIER_TURNS = 2
_REMEMBERED = 4096  # texts' scores kept per classifier; cleared whole when full


def earlier_user_texts(payload: Payload, limit: int, chars: int) -> list[str]:
    """The text of up to `limit` user messages before the last one, most recent first, each
    cut to its last `chars` characters (as the last one is)."""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return []
    texts: list[str] = []
    last_seen = False
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        if not last_seen:
            last_seen = True
            continue
        text = content_text(message.get("content"))
        if text:
            texts.append(text[-chars:])
        if len(texts) == limit:
            break
    return texts


class TurnScores:
    """p_strong of texts already scored by one model, bounded."""

    __slots__ = ("_scores",)

    def __init__(self) -> None:
        self._scores: dict[bytes, float] = {}

    async def p_strong(self, text: str, score: Callable[[str], Awaitable[float]]) -> float:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        known = self._scores.get(key)
        if known is not None:
            return known
        p = await score(text)
        if len(self._scores) >= _REMEMBERED:
            self._scores.clear()  # a flood of new conversations cannot grow it
        self._scores[key] = p
        return p


async def in_context(last: float, earlier: list[str],
                     score: Callable[[str], Awaitable[float]]) -> tuple[float, int]:
    """(p_strong, turns back it came from): the last message's unless an earlier one scores
    higher."""
    best, turns_back = last, 0
    for back, text in enumerate(earlier, start=1):
        p = await score(text)
        if p > best:
            best, turns_back = p, back
    return best, turns_back
