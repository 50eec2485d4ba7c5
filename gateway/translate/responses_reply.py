"""Front door: an OpenAI chat completion → a Responses `response` object (pure).

Output items in the order a Responses model writes them: `reasoning` (when the backend
returned reasoning text), `message` with one `output_text` part, then one `function_call`
per tool call. `finish_reason: length` is `status: incomplete` with reason
`max_output_tokens`, `content_filter` is `incomplete` with reason `content_filter`. Usage
is renamed: prompt → input, completion → output, with cached and reasoning token details.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def new_id(prefix: str) -> str:
    """An id in OpenAI's style: a type prefix and 48 hex digits (24 random bytes)."""
    return f"{prefix}_{secrets.token_hex(24)}"


def response_usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}
    prompt = usage.get("prompt_tokens_details")
    prompt = prompt if isinstance(prompt, dict) else {}
    completion = usage.get("completion_tokens_details")
    completion = completion if isinstance(completion, dict) else {}
    input_tokens = int(usage.get("prompt_tokens") or 0)
    output_tokens = int(usage.get("completion_tokens") or 0)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {
            "cached_tokens": int(prompt.get("cached_tokens") or 0),
            "cache_write_tokens": int(prompt.get("cache_write_tokens") or 0),
        },
        "output_tokens": output_tokens,
        "output_tokens_details": {
            "reasoning_tokens": int(completion.get("reasoning_tokens") or 0),
        },
        "total_tokens": input_tokens + output_tokens,
    }


def reasoning_item(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": [],
            "content": [{"type": "reasoning_text", "text": text}], "status": "completed"}


def message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": status,
            "content": [{"type": "output_text", "text": text, "annotations": [],
                         "logprobs": []}]}


def function_call_item(item_id: str, call_id: str, name: str, arguments: str,
                       status: str = "completed") -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}


def output_items(message: dict[str, Any], finish_reason: str | None) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        items.append(reasoning_item(new_id("rs"), reasoning))
    text = message.get("content")
    calls = message.get("tool_calls") or []
    refusal = message.get("refusal")
    status = "incomplete" if finish_reason in INCOMPLETE else "completed"
    if isinstance(refusal, str) and refusal:
        items.append({"type": "message", "id": new_id("msg"), "role": "assistant",
                      "status": status,
                      "content": [{"type": "refusal", "refusal": refusal}]})
    elif isinstance(text, str) and (text or not calls):
        items.append(message_item(new_id("msg"), text, status))
    for call in calls:
        function = call.get("function") or {}
        items.append(function_call_item(
            new_id("fc"), str(call.get("id") or new_id("call")), function.get("name") or "",
            function.get("arguments") or "", "completed"))
    return items


def response_object(
    response_id: str,
    echo: dict[str, Any],
    model: str,
    *,
    created_at: int,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    incomplete_reason: str | None = None,
    error: dict[str, Any] | None = None,
    store: bool = True,
) -> dict[str, Any]:
    """The `response` object: what the model wrote, and the request's settings echoed."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": {"reason": incomplete_reason} if incomplete_reason else None,
        "model": model,
        "output": output,
        "store": store,
        "usage": usage,
        **echo,
    }


def to_response(completion: dict[str, Any], response_id: str, echo: dict[str, Any],
                model: str, *, store: bool) -> dict[str, Any]:
    choices = completion.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    finish_reason = choice.get("finish_reason")
    message = choice.get("message") or {}
    reason = INCOMPLETE.get(finish_reason or "")
    created = completion.get("created")
    return response_object(
        response_id, echo, model,
        created_at=created if isinstance(created, int) else int(time.time()),
        status="incomplete" if reason else "completed",
        output=output_items(message, finish_reason),
        usage=response_usage(completion.get("usage")),
        incomplete_reason=reason,
        store=store,
    )
