"""Front door: an Anthropic Messages request → the OpenAI chat payload the gateway routes (pure).

`system` becomes the first message; `tool_use` blocks become assistant `tool_calls`;
`tool_result` blocks become `role: tool` messages; `stop_sequences` → `stop`;
`metadata.user_id` → `user`; `output_config.format` → `response_format`. The gateway always
asks for stream usage: Anthropic's `message_delta` carries it.

Extended thinking comes out as the Anthropic-native `thinking` field, the thinking blocks of
earlier assistant turns, signatures included, as the message's `thinking_blocks` (Anthropic
needs them back when thinking meets tool use), and the `anthropic-beta` header as
`anthropic_beta`; messages_extensions.py keeps all three out of the routed payload and puts
them back where a backend is sent a translation (an Anthropic backend gets them as sent, the
OpenAI family `reasoning_effort` where the model reasons).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from gateway.errors import InvalidRequest
from gateway.types import Payload

# Accepted and left out: hints an OpenAI-shaped backend has no field for.
IGNORED = frozenset({"service_tier", "cache_control", "inference_geo",
                     "context_management", "container"})
HANDLED = frozenset({"model", "messages", "max_tokens", "system", "stop_sequences", "stream",
                     "temperature", "top_p", "top_k", "tools", "tool_choice", "metadata",
                     "output_config", "thinking"})
# An anthropic-beta header value: comma-separated feature names.
BETA = re.compile(r"^[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*$")


def to_chat_payload(body: Any, beta: str | None = None) -> Payload:
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    for name in body:
        if name not in HANDLED and name not in IGNORED:
            raise InvalidRequest(f"{name}: Extra inputs are not permitted", param=name)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("model: Field required", param="model")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidRequest("max_tokens: a positive integer is required", param="max_tokens")
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise InvalidRequest("messages: at least one message is required", param="messages")
    thinking = _thinking(body.get("thinking"))
    messages = _system(body.get("system"))
    for i, turn in enumerate(turns):
        messages.extend(_turn(turn, f"messages.{i}", keep_thinking=thinking is not None))
    payload: Payload = {"model": model, "messages": messages, "max_tokens": max_tokens}
    if thinking is not None:
        payload["thinking"] = thinking
    if beta:
        if len(beta) > 512 or not BETA.match(beta):
            raise InvalidRequest("anthropic-beta: expected comma-separated beta names",
                                 param="anthropic-beta")
        payload["anthropic_beta"] = beta
    if body.get("stop_sequences"):
        payload["stop"] = body["stop_sequences"]
    for name in ("temperature", "top_p", "top_k"):
        if body.get(name) is not None:
            payload[name] = body[name]
    if body.get("tools"):
        if not isinstance(body["tools"], list):
            raise InvalidRequest("tools: expected an array of tools", param="tools")
        payload["tools"] = [_tool(t, f"tools.{i}") for i, t in enumerate(body["tools"])]
        payload.update(_tool_choice(body.get("tool_choice")))
    user = _object(body.get("metadata")).get("user_id")
    if isinstance(user, str) and user:
        payload["user"] = user
    fmt = _object(body.get("output_config")).get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        payload["response_format"] = {
            "type": "json_schema", "json_schema": {"name": "output", "schema": fmt.get("schema")}}
    if body.get("stream"):
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return payload


def _system(system: Any) -> list[dict[str, Any]]:
    if not system:
        return []
    if isinstance(system, str):
        return [{"role": "system", "content": system}]
    if not isinstance(system, list):
        raise InvalidRequest("system: expected a string or text blocks", param="system")
    blocks = [b for b in system if isinstance(b, dict) and b.get("type") == "text"]
    if not blocks or len(blocks) != len(system):
        raise InvalidRequest("system: expected a string or text blocks", param="system")
    parts = [_cached({"type": "text", "text": b.get("text")}, b) for b in blocks]
    single = len(parts) == 1 and "cache_control" not in parts[0]
    return [{"role": "system", "content": parts[0]["text"] if single else parts}]


def _cached(part: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    """A prompt-cache breakpoint travels with its part: Anthropic backends honour it, the
    OpenAI family drops it (gateway/providers/openai_hygiene.py)."""
    if isinstance(block.get("cache_control"), dict):
        part["cache_control"] = block["cache_control"]
    return part


def _thinking(thinking: Any) -> dict[str, Any] | None:
    """The thinking config to pass on; None when thinking is off."""
    if thinking is None:
        return None
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "disabled":
        return None
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024:
            raise InvalidRequest("thinking.budget_tokens: an integer of at least 1024 is "
                                 "required", param="thinking.budget_tokens")
        return dict(thinking)
    if kind == "adaptive":
        return dict(thinking)
    raise InvalidRequest("thinking.type: expected 'enabled', 'adaptive' or 'disabled'",
                         param="thinking.type")


def _turn(turn: Any, where: str, *, keep_thinking: bool = False) -> list[dict[str, Any]]:
    role = turn.get("role") if isinstance(turn, dict) else None
    if role not in ("user", "assistant"):
        raise InvalidRequest(f"{where}.role: expected 'user' or 'assistant'", param=where)
    content = turn.get("content")
    if isinstance(content, str):
        return [{"role": role, "content": content}]
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content: expected a string or blocks", param=where)
    if role == "assistant":
        return [_assistant(content, where, keep_thinking)]
    tool_messages: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            tool_messages.append({"role": "tool", "tool_call_id": block.get("tool_use_id"),
                                  "content": _result_text(block, f"{where}.content.{j}")})
        elif kind == "text":
            parts.append(_cached({"type": "text", "text": block.get("text") or ""}, block))
        elif kind == "image":
            parts.append(_cached({"type": "image_url",
                                  "image_url": {"url": _source_url(block, where)}}, block))
        elif kind == "document":
            parts.append(_cached({"type": "file",
                                  "file": {"file_data": _source_url(block, where)}}, block))
        else:
            raise InvalidRequest(f"{where}.content.{j}: block type {kind!r} is not supported "
                                 "by the gateway", param=f"{where}.content.{j}.type")
    if not parts:
        return tool_messages
    single = len(parts) == 1 and parts[0]["type"] == "text" and "cache_control" not in parts[0]
    return [*tool_messages, {"role": "user", "content": parts[0]["text"] if single else parts}]


def _assistant(content: list[Any], where: str, keep_thinking: bool) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "tool_use":
            calls.append({"id": block.get("id"), "type": "function", "function": {
                "name": block.get("name"),
                "arguments": orjson.dumps(block.get("input") or {}).decode()}})
        elif kind in ("thinking", "redacted_thinking"):
            # Only meaningful to the model that wrote them, and only with thinking on.
            if keep_thinking:
                thinking.append(block)
        else:
            raise InvalidRequest(f"{where}: assistant block type {kind!r} is not supported",
                                 param=where)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    if thinking:
        message["thinking_blocks"] = thinking
    return message


def _result_text(block: dict[str, Any], where: str) -> str:
    content = block.get("content")
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise InvalidRequest(f"{where}.content: only text tool results are supported",
                             param=f"{where}.content")
    texts = [b.get("text") or "" for b in content
             if isinstance(b, dict) and b.get("type") == "text"]
    if len(texts) != len(content):
        raise InvalidRequest(f"{where}.content: only text tool results are supported",
                             param=f"{where}.content")
    return "\n".join(texts)


def _source_url(block: dict[str, Any], where: str) -> str:
    source = _object(block.get("source"))
    if source.get("type") == "base64":
        return f"data:{source.get('media_type')};base64,{source.get('data')}"
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        return str(source["url"])
    raise InvalidRequest(f"{where}: source type {source.get('type')!r} is not supported",
                         param=where)


def _object(value: Any) -> dict[str, Any]:
    """An optional JSON object field: absent or of another type reads as empty."""
    return value if isinstance(value, dict) else {}


def _tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or tool.get("type") not in (None, "custom"):
        kind = tool.get("type") if isinstance(tool, dict) else None
        raise InvalidRequest(f"{where}: server tool {kind!r} is not supported by the gateway",
                             param=where)
    function: dict[str, Any] = {"name": tool.get("name")}
    if tool.get("description"):
        function["description"] = tool["description"]
    function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _tool_choice(choice: Any) -> dict[str, Any]:
    if not isinstance(choice, dict):
        return {}
    kind = choice.get("type")
    out: dict[str, Any] = {}
    if kind == "any":
        out["tool_choice"] = "required"
    elif kind == "none":
        out["tool_choice"] = "none"
    elif kind == "tool":
        out["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif kind == "auto":
        out["tool_choice"] = "auto"
    else:
        raise InvalidRequest(f"tool_choice.type: {kind!r} is not supported", param="tool_choice")
    if choice.get("disable_parallel_tool_use"):
        out["parallel_tool_calls"] = False
    return out
