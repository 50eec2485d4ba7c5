"""Front door: an OpenAI chat completion → an Anthropic `message`, and gateway errors →
Anthropic's error shape (pure).

Usage goes the other way from the upstream adapter: Anthropic's `input_tokens` excludes
cached tokens, so input_tokens = prompt_tokens − cached − cache writes (never below 0).
"""

from __future__ import annotations

import secrets
from typing import Any

import orjson

from gateway.errors import GatewayError
from gateway.translate.anthropic_vocabulary import ERROR_TYPES, STOP_REASONS


def stop_reason(finish_reason: str | None, matched_stop: Any = None) -> tuple[str, str | None]:
    """(stop_reason, stop_sequence). vLLM reports the stop string it matched as `stop_reason`."""
    if finish_reason == "stop" and isinstance(matched_stop, str):
        return "stop_sequence", matched_stop
    return STOP_REASONS.get(finish_reason or "stop", "end_turn"), None


def anthropic_usage(usage: Any) -> dict[str, int]:
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = int(details.get("cached_tokens") or 0)
    written = int(details.get("cache_write_tokens") or details.get("cache_creation_tokens") or 0)
    return {
        "input_tokens": max(int(usage.get("prompt_tokens") or 0) - cached - written, 0),
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
    }


def message_id(completion_id: Any) -> str:
    raw = str(completion_id or "").removeprefix("chatcmpl-") or "gateway"
    return raw if raw.startswith("msg_") else f"msg_{raw}"


def tool_use_id(call_id: Any) -> str:
    """Anthropic's `toolu_` form for any backend's tool-call id. The client hands it back in
    `tool_result`; as long as both sides carry the same string, every backend accepts it."""
    raw = str(call_id or "") or secrets.token_hex(12)
    return raw if raw.startswith("toolu_") else f"toolu_{raw}"


def thinking_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Thinking as Anthropic content blocks: as an Anthropic backend wrote them (signatures
    included), else the reasoning text another backend returned, unsigned."""
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        return [b for b in blocks if isinstance(b, dict)
                and b.get("type") in ("thinking", "redacted_thinking")]
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        return [{"type": "thinking", "thinking": reasoning, "signature": ""}]
    return []


def tool_input(arguments: Any) -> dict[str, Any]:
    """Anthropic needs an object; a model that wrote broken JSON keeps its text visible."""
    try:
        parsed = orjson.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"_unparsed_arguments": arguments}


def to_anthropic_message(completion: dict[str, Any], model: str) -> dict[str, Any]:
    choices = completion.get("choices") or [{}]
    choice = choices[0]
    message = choice.get("message") or {}
    content = thinking_blocks(message)
    text = message.get("content")
    calls = message.get("tool_calls") or []
    if isinstance(text, str) and (text or not calls):
        content.append({"type": "text", "text": text})
    for call in calls:
        function = call.get("function") or {}
        content.append({"type": "tool_use", "id": tool_use_id(call.get("id")),
                        "name": function.get("name"),
                        "input": tool_input(function.get("arguments"))})
    reason, sequence = stop_reason(choice.get("finish_reason"), choice.get("stop_reason"))
    return {
        "id": message_id(completion.get("id")),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": sequence,
        "usage": anthropic_usage(completion.get("usage")),
    }


def error_type(status: int) -> str:
    return ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def error_body(error: GatewayError, request_id: str) -> bytes:
    return orjson.dumps({
        "type": "error",
        "error": {"type": error_type(error.status), "message": error.message},
        "request_id": request_id,
    })
