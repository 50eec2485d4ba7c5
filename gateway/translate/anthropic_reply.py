"""Anthropic Messages response → OpenAI chat completion and usage (pure).

Usage: Anthropic's `input_tokens` excludes cached tokens while OpenAI's `prompt_tokens`
includes them, so prompt_tokens = input + cache_creation + cache_read, and
`prompt_tokens_details.cached_tokens` = cache_read.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.translate.anthropic_request import JsonMode
from gateway.translate.anthropic_vocabulary import FINISH_REASONS
from gateway.translate.token_counts import MAX_TOKEN_COUNT, token_count
from gateway.types import Usage


def finish_reason(stop_reason: str | None, tool_calls: int) -> str:
    if stop_reason == "tool_use" and not tool_calls:
        return "stop"  # only the forced answer tool was called: to the client it is content
    return FINISH_REASONS.get(stop_reason if isinstance(stop_reason, str) else "end_turn",
                              "stop")


def openai_usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}
    cache_read = token_count(usage.get("cache_read_input_tokens"))
    cache_write = token_count(usage.get("cache_creation_input_tokens"))
    prompt = min(token_count(usage.get("input_tokens")) + cache_read + cache_write,
                 MAX_TOKEN_COUNT)
    completion = token_count(usage.get("output_tokens"))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cache_read, "cache_write_tokens": cache_write},
    }


def gateway_usage(openai: dict[str, Any]) -> Usage:
    return Usage(
        prompt_tokens=openai["prompt_tokens"],
        completion_tokens=openai["completion_tokens"],
        cached_tokens=openai["prompt_tokens_details"]["cached_tokens"],
        cache_write_tokens=openai["prompt_tokens_details"]["cache_write_tokens"],
    )


def answer_text(tool_input: Any, json_mode: JsonMode) -> str:
    """The forced answer tool's input, as the JSON text OpenAI would have put in content."""
    if json_mode.wrapped and isinstance(tool_input, dict):
        tool_input = tool_input.get("value")
    return orjson.dumps(tool_input).decode()


def to_chat_completion(
    message: dict[str, Any], json_mode: JsonMode | None, created: int
) -> tuple[bytes, Usage]:
    texts: list[str] = []
    reasoning: list[str] = []
    signed: list[dict[str, Any]] = []  # the blocks themselves, for Claude clients
    calls: list[dict[str, Any]] = []
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(_string(block.get("text")))
        elif kind == "thinking":
            reasoning.append(_string(block.get("thinking")))
            signed.append({"type": "thinking", "thinking": _string(block.get("thinking")),
                           "signature": _string(block.get("signature"))})
        elif kind == "redacted_thinking":
            signed.append({"type": "redacted_thinking", "data": _string(block.get("data"))})
        elif kind == "tool_use" and json_mode and block.get("name") == json_mode.tool_name:
            texts.append(answer_text(block.get("input"), json_mode))
        elif kind == "tool_use":
            calls.append({
                "id": block.get("id"),
                "type": "function",
                "function": {"name": block.get("name"),
                             "arguments": orjson.dumps(block.get("input") or {}).decode()},
            })
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts or not calls
                             else None}
    if calls:
        reply["tool_calls"] = calls
    if reasoning:
        reply["reasoning_content"] = "".join(reasoning)
    if signed:
        reply["thinking_blocks"] = signed
    stop_reason = message.get("stop_reason")
    finish = finish_reason(stop_reason, len(calls))
    if stop_reason == "refusal":
        reply["refusal"] = reply["content"] or None
    usage = openai_usage(message.get("usage"))
    body = {
        "id": f"chatcmpl-{message.get('id') or ''}",
        "object": "chat.completion",
        "created": created,
        "model": message.get("model"),
        "choices": [{"index": 0, "message": reply, "logprobs": None, "finish_reason": finish,
                     # vLLM's field for the stop string that matched; front doors read it.
                     "stop_reason": message.get("stop_sequence")}],
        "usage": usage,
    }
    return orjson.dumps(body), gateway_usage(usage)


def _string(value: Any) -> str:
    # An upstream that breaks the wire format loses that block, not the whole reply.
    return value if isinstance(value, str) else ""
