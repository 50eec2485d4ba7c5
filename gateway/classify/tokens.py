"""Prompt-token estimates from the request payload, cheap enough for every request.

A first, deliberately simple estimator: about four characters per token for English text,
plus a few tokens of chat-template overhead per message. It never tokenizes, so a 128K-token
prompt costs one pass over its strings. Exact per-family counting replaces it later; the
interface (payload → int) stays.
"""

from __future__ import annotations

from typing import Any

from gateway.types import Endpoint, Payload

CHARS_PER_TOKEN = 4
PER_MESSAGE_TOKENS = 4
REPLY_PRIMER_TOKENS = 3


def estimate_prompt_tokens(endpoint: Endpoint, payload: Payload) -> int:
    if endpoint is Endpoint.CHAT:
        messages = payload.get("messages")
        chars = 0
        count = 0
        if isinstance(messages, list):
            for message in messages:
                count += 1
                if isinstance(message, dict):
                    chars += _text_chars(message.get("content"))
                    calls = message.get("tool_calls")
                    if calls:
                        chars += _text_chars(calls)
        tools = payload.get("tools")
        if tools:
            chars += _text_chars(tools)
        return _tokens(chars) + count * PER_MESSAGE_TOKENS + REPLY_PRIMER_TOKENS
    if endpoint is Endpoint.COMPLETIONS:
        return _prompt_tokens(payload.get("prompt"))
    return _prompt_tokens(payload.get("input"))


def _tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _prompt_tokens(prompt: Any) -> int:
    if isinstance(prompt, str):
        return _tokens(len(prompt))
    if isinstance(prompt, list):
        if prompt and all(isinstance(t, int) for t in prompt):
            return len(prompt)  # already token ids
        return sum(_prompt_tokens(p) for p in prompt)
    return 0


def _text_chars(value: Any) -> int:
    """Characters of text in a content value: strings, parts, nested tool structures."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_text_chars(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "image_url":
            return 85 * CHARS_PER_TOKEN  # a low-detail image's token cost at OpenAI
        return sum(_text_chars(v) for v in value.values())
    return 0
