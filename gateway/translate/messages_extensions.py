"""The Messages front door's fields that chat completions has no place for: the client's
extended-thinking config, its anthropic-beta header and earlier turns' signed thinking blocks.

The routed payload goes without them (`split_extensions`): classification, redaction and the
OpenAI family never see them. A translation gets them back (`Extensions.restore`), and for
an OpenAI-family backend `for_openai_family` turns thinking into the `reasoning_effort` its
model takes, or leaves it out, and drops the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.translate.anthropic_request import BETA_KEY
from gateway.translate.anthropic_vocabulary import effort_for_budget
from gateway.types import Backend, Payload, WireForms

THINKING = "thinking"
BLOCKS = "thinking_blocks"  # on an assistant message: its signed thinking, as Claude wrote it


@dataclass(frozen=True, slots=True)
class Extensions:
    thinking: dict[str, Any] | None
    beta: str | None
    blocks: tuple[tuple[int, list[Any]], ...]  # (message index, its thinking blocks)

    def restore(self, routed: Payload) -> Payload:
        """The routed payload (or its redacted copy, message for message) with them back."""
        payload = dict(routed)
        if self.thinking is not None:
            payload[THINKING] = self.thinking
        if self.beta is not None:
            payload[BETA_KEY] = self.beta
        if self.blocks:
            messages = list(payload["messages"])
            for i, blocks in self.blocks:
                messages[i] = {**messages[i], BLOCKS: blocks}
            payload["messages"] = messages
        return payload


def split_extensions(payload: Payload) -> tuple[Payload, WireForms | None]:
    """The Messages front door's chat payload → the routed payload without them, and the
    forms that put them back for a translation (None when there are none)."""
    if THINKING not in payload and BETA_KEY not in payload:
        return payload, None  # thinking blocks travel only with thinking on
    routed = dict(payload)
    thinking = routed.pop(THINKING, None)
    beta = routed.pop(BETA_KEY, None)
    messages = routed.get("messages")
    blocks: list[tuple[int, list[Any]]] = []
    if isinstance(messages, list) and any(isinstance(m, dict) and BLOCKS in m
                                          for m in messages):
        blocks = [(i, m[BLOCKS]) for i, m in enumerate(messages)
                  if isinstance(m, dict) and BLOCKS in m]
        routed["messages"] = [_without_blocks(m) for m in messages]
    extensions = Extensions(thinking, beta, tuple(blocks))
    return routed, WireForms(extend=extensions.restore)


def for_openai_family(payload: Payload, backend: Backend) -> Payload:
    """A chat payload for an OpenAI-family backend: `anthropic_beta` left out, extended
    `thinking` made `reasoning_effort` where the model takes it, and the signed thinking
    blocks only Anthropic can read left out. The payload itself when it has none of them
    (a chat client that sent them through extra_body gets the same)."""
    if THINKING not in payload and BETA_KEY not in payload:
        return payload
    body = dict(payload)
    body.pop(BETA_KEY, None)
    thinking = body.pop(THINKING, None)
    if not isinstance(thinking, dict):
        return body
    if backend.takes_reasoning_effort and "reasoning_effort" not in body:
        body["reasoning_effort"] = effort_for_budget(thinking)
    messages = body.get("messages")
    if isinstance(messages, list) and any(isinstance(m, dict) and BLOCKS in m
                                          for m in messages):
        body["messages"] = [_without_blocks(m) for m in messages]
    return body


def _without_blocks(message: Any) -> Any:
    if not isinstance(message, dict) or BLOCKS not in message:
        return message
    return {k: v for k, v in message.items() if k != BLOCKS}
