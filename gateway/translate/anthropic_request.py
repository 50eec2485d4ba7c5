"""OpenAI chat request → Anthropic Messages request (pure).

What Anthropic cannot do is refused with a 400 that names the parameter and the backend;
sampling hints it has no equivalent for (penalties, seed, store, metadata) are dropped.
Message content is translated by anthropic_content.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.translate.anthropic_content import to_messages, unsupported
from gateway.translate.anthropic_vocabulary import THINKING_BUDGETS
from gateway.types import Backend, Payload
from gateway.types.provider_options import anthropic_options

ANTHROPIC_MAX_TEMPERATURE = 1.0
JSON_TOOL_NAME = "json_response"
MIN_THINKING_BUDGET = 1024  # Anthropic's
# Keys of a Messages payload (what the Anthropic provider is sent) that are not body fields:
# the provider takes them out. The client's anthropic-beta header goes as that header, and
# the JSON mode the request was translated with is how its reply is read back.
BETA_KEY = "anthropic_beta"
JSON_MODE_KEY = "json_mode"

# OpenAI fields with no Anthropic equivalent that only tune sampling or bookkeeping: dropped.
DROPPED = frozenset({
    "frequency_penalty", "presence_penalty", "seed", "store", "metadata", "service_tier",
    "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "verbosity",
    "stream_options", "logprobs", "top_logprobs", "n", "logit_bias", "user",
})
# Anthropic-native fields a client may send through the OpenAI SDK's extra_body.
NATIVE = frozenset({"top_k"})
HANDLED = frozenset({
    "model", "messages", "stream", "max_tokens", "max_completion_tokens", "stop", "temperature",
    "top_p", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "reasoning_effort",
    # The Messages front door's own (messages_extensions.py): the client's thinking config,
    # and its anthropic-beta header (sent as a header, see to_messages_payload).
    "thinking", BETA_KEY,
})


@dataclass(frozen=True, slots=True)
class JsonMode:
    """`response_format` done as a forced tool: the tool's input is the answer's content."""

    tool_name: str
    wrapped: bool  # a schema that is not an object sits under {"value": ...}


@dataclass(frozen=True, slots=True)
class MessagesRequest:
    body: Payload
    json_mode: JsonMode | None


def to_messages_payload(payload: Payload, backend: Backend) -> Payload:
    """A chat payload as the Messages payload the Anthropic provider sends to `backend`: the
    body (without `stream`, which the provider adds), with the beta header's value and the
    JSON mode under BETA_KEY and JSON_MODE_KEY."""
    request = to_messages_request(payload, backend, stream=False)
    body = request.body  # built here: nobody else holds it
    beta = payload.get(BETA_KEY)
    if isinstance(beta, str) and beta:
        body[BETA_KEY] = beta
    if request.json_mode is not None:
        body[JSON_MODE_KEY] = request.json_mode
    return body


def split_messages_payload(payload: Payload) -> tuple[Payload, JsonMode | None, str | None]:
    """A Messages payload → (the body to send, a copy; its JSON mode; its beta header)."""
    body = dict(payload)
    json_mode = body.pop(JSON_MODE_KEY, None)
    beta = body.pop(BETA_KEY, None)
    return (body, json_mode if isinstance(json_mode, JsonMode) else None,
            beta if isinstance(beta, str) else None)


def to_messages_request(payload: Payload, backend: Backend, *, stream: bool) -> MessagesRequest:
    _refuse_unsupported(payload, backend.name)
    system, messages = to_messages(payload["messages"], backend.name)
    body: Payload = {"model": backend.model, "messages": messages}
    if system:
        body["system"] = system
    max_tokens = payload.get("max_completion_tokens") or payload.get("max_tokens")
    body["max_tokens"] = max_tokens or anthropic_options(backend).default_max_tokens
    stop = payload.get("stop")
    if stop is not None:
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise unsupported("stop", backend.name, "expected a string or a list of strings")
        # Anthropic rejects whitespace-only stop sequences (OpenAI clients often send "\n").
        sequences = [s for s in stops if s.strip()]
        if sequences:
            body["stop_sequences"] = sequences
    temperature = payload.get("temperature")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise unsupported("temperature", backend.name, "expected a number")
        # OpenAI's range is 0–2, Anthropic's 0–1: clamp rather than fail a valid request.
        body["temperature"] = min(max(float(temperature), 0.0), ANTHROPIC_MAX_TEMPERATURE)
    for name in ("top_p", *NATIVE):
        if payload.get(name) is not None:
            body[name] = payload[name]
    if isinstance(payload.get("user"), str) and _is_opaque_id(payload["user"]):
        body["metadata"] = {"user_id": payload["user"]}
    tools, tool_choice = _tools(payload, backend.name)
    json_mode = _json_mode(payload.get("response_format"), tools, backend.name)
    if json_mode is not None:
        tools, tool_choice = _force_json_tool(payload, json_mode, tools, tool_choice)
    if tools:
        body["tools"] = tools
    if tool_choice is not None:
        if payload.get("parallel_tool_calls") is False and tool_choice["type"] != "none":
            tool_choice = {**tool_choice, "disable_parallel_tool_use": True}
        body["tool_choice"] = tool_choice
    thinking = payload.get("thinking")
    effort = payload.get("reasoning_effort")
    if isinstance(thinking, dict):
        _pass_thinking(body, thinking, backend.name)
    elif effort in THINKING_BUDGETS:
        _enable_thinking(body, THINKING_BUDGETS[effort], bool(max_tokens), backend.name)
    if stream:
        body["stream"] = True
    return MessagesRequest(body, json_mode)


def _refuse_unsupported(payload: Payload, backend: str) -> None:
    for name, value in payload.items():
        if name in HANDLED or name in NATIVE or value is None:
            continue
        if name in DROPPED:
            _check_dropped(name, value, backend)
            continue
        raise unsupported(name, backend)


def _check_dropped(name: str, value: Any, backend: str) -> None:
    # Dropped only while harmless: a value that changes what the client gets back is refused.
    changes_reply = (
        (name == "n" and value != 1)
        or (name == "logprobs" and value is True)
        or (name == "top_logprobs" and value)
        or (name == "logit_bias" and value)
    )
    if changes_reply:
        raise unsupported(name, backend)


def _tools(payload: Payload, backend: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    tools: list[dict[str, Any]] = []
    for i, tool in enumerate(payload.get("tools") or ()):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type") != "function":
            raise unsupported(f"tools[{i}].type", backend, "only function tools are supported")
        out: dict[str, Any] = {"name": function.get("name")}
        if function.get("description"):
            out["description"] = function["description"]
        schema = function.get("parameters")
        out["input_schema"] = schema if isinstance(schema, dict) and schema else {
            "type": "object", "properties": {}}
        tools.append(out)
    choice = payload.get("tool_choice")
    mapped: dict[str, Any] | None = None
    if not tools:
        choice = None
    elif choice is None or choice == "auto":
        mapped = {"type": "auto"}
    elif choice == "required":
        mapped = {"type": "any"}
    elif choice == "none":
        mapped = {"type": "none"}
    elif isinstance(choice, dict) and choice.get("type") == "function":
        mapped = {"type": "tool", "name": (choice.get("function") or {}).get("name")}
    elif isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        allowed = choice.get("allowed_tools") or {}
        names = {(t.get("function") or {}).get("name") for t in allowed.get("tools") or ()}
        tools = [t for t in tools if t["name"] in names]
        mapped = {"type": "any" if allowed.get("mode") == "required" else "auto"}
    else:
        raise unsupported("tool_choice", backend)
    if choice is None and payload.get("parallel_tool_calls") is not False:
        mapped = None  # Anthropic's default is auto: send nothing we were not asked for
    return tools, mapped


def _json_mode(fmt: Any, tools: list[dict[str, Any]], backend: str) -> JsonMode | None:
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") not in ("json_schema", "json_object"):
        raise unsupported("response_format.type", backend)
    if any(t["name"] == JSON_TOOL_NAME for t in tools):
        raise unsupported("tools", backend, f"the tool name {JSON_TOOL_NAME!r} is reserved")
    schema = (fmt.get("json_schema") or {}).get("schema") if fmt["type"] == "json_schema" else None
    wrapped = isinstance(schema, dict) and schema.get("type") not in (None, "object")
    return JsonMode(JSON_TOOL_NAME, wrapped)


def _force_json_tool(
    payload: Payload,
    mode: JsonMode,
    tools: list[dict[str, Any]],
    tool_choice: dict[str, Any] | None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    fmt = payload["response_format"]
    spec = fmt.get("json_schema") or {}
    schema = spec.get("schema") if fmt["type"] == "json_schema" else None
    if not isinstance(schema, dict) or not schema:
        schema = {"type": "object", "additionalProperties": True}
    elif mode.wrapped:
        schema = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    tool: dict[str, Any] = {
        "name": mode.tool_name,
        "description": spec.get("description") or "Respond with the answer as this tool's input.",
        "input_schema": schema,
    }
    if not tools or (tool_choice or {}).get("type") == "none":
        # Only the answer format is in play: force it.
        return [tool], {"type": "tool", "name": mode.tool_name}
    if (tool_choice or {}).get("type") == "tool":
        return [*tools, tool], tool_choice or {}
    # Client tools too: the model must call something, and "answering" is one of the tools.
    return [*tools, tool], {"type": "any"}


def _enable_thinking(body: Payload, budget: int, client_max: bool, backend: str) -> None:
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise unsupported(
            "reasoning_effort", backend,
            "extended thinking cannot be combined with a forced tool_choice or response_format",
        )
    max_tokens = body["max_tokens"]
    if not client_max:
        max_tokens = body["max_tokens"] = max(max_tokens, 2 * budget)
    # OpenAI's limit includes reasoning tokens, and so does Anthropic's: the budget must fit.
    budget = min(budget, max_tokens - 1)
    if budget < MIN_THINKING_BUDGET:
        raise unsupported(
            "max_completion_tokens", backend,
            f"reasoning_effort needs a limit above {MIN_THINKING_BUDGET} tokens",
        )
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    # Anthropic allows no temperature or top_k changes while thinking.
    body.pop("temperature", None)
    body.pop("top_k", None)


def _pass_thinking(body: Payload, thinking: dict[str, Any], backend: str) -> None:
    """A Claude client's own thinking config, as it sent it (Anthropic checks the budget)."""
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise unsupported(
            "thinking", backend,
            "extended thinking cannot be combined with a forced tool_choice or response_format",
        )
    body["thinking"] = thinking
    body.pop("temperature", None)
    body.pop("top_k", None)


def _is_opaque_id(user: str) -> bool:
    # Anthropic asks for an opaque id: never forward an e-mail address or a phone number.
    digits = sum(c.isdigit() for c in user)
    return bool(user) and "@" not in user and digits < 7 and len(user) <= 256
