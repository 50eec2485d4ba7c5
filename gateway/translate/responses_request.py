"""Front door: an OpenAI Responses request → the chat payload the gateway routes (pure).

`instructions` becomes the first (system) message, then the stored conversation a
`previous_response_id` names, then `input` (items translated by responses_items.py).
`max_output_tokens` → `max_tokens`, `text.format` → `response_format`, `reasoning.effort` →
`reasoning_effort`. `store`, `metadata` and `previous_response_id` are the gateway's own
business and never reach a backend. What chat completions cannot express is refused with a
400 naming the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.errors import InvalidRequest
from gateway.translate.responses_items import Untranslatable, append_item
from gateway.types import Payload

# Passed to the chat payload under the same name.
SAME_NAME = ("temperature", "top_p", "parallel_tool_calls", "user", "prompt_cache_key",
             "safety_identifier", "service_tier")
# Accepted, and meaningless once translated: `truncation: auto` asks OpenAI to drop old
# turns, which a chat backend never needs to be told; `include` asks for extra output
# (encrypted reasoning, logprobs) a chat backend does not produce; `stream_options` only
# holds OpenAI's obfuscation padding switch.
IGNORED = frozenset({"include", "truncation", "stream_options"})
HANDLED = frozenset({"model", "input", "instructions", "max_output_tokens", "tools",
                     "tool_choice", "text", "reasoning", "metadata", "store", "stream",
                     "previous_response_id", "background", *SAME_NAME})
# Never served: the gateway keeps the conversation state itself.
REFUSED = {
    "conversation": "conversation objects are not kept by the gateway; use "
                    "previous_response_id",
}
# Only a backend that serves the Responses API itself can take these (named, so the refusal
# can say why rather than "unknown parameter").
NOT_TRANSLATABLE = {
    "prompt": "stored prompt templates live at OpenAI, not at the gateway",
    "top_logprobs": "log probabilities are not carried on the translated path",
    "max_tool_calls": "only built-in tools count against max_tool_calls, and only a "
                      "backend that serves the Responses API runs them",
}


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    """What the front door keeps of a Responses request: the routed chat payload, the items
    this turn adds to the conversation, the fields a Response object echoes back, and the
    body as sent (for backends that serve the Responses API natively)."""

    model: str
    payload: Payload
    input_items: list[dict[str, Any]]
    stream: bool
    store: bool
    previous_response_id: str | None
    echo: dict[str, Any] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)


def parse_responses_request(body: Any, *, strict: bool = True) -> ResponsesRequest:
    """Validate the body's shape; the conversation (history) is added by `to_chat_payload`.
    Raises `Untranslatable` for what only a Responses API backend can serve, unless not
    `strict`: then the chat form leaves it out."""
    if not isinstance(body, dict):
        raise InvalidRequest("the request body must be a JSON object")
    for name, value in body.items():
        if name in REFUSED and value is not None:
            raise InvalidRequest(f"{name}: {REFUSED[name]}", param=name,
                                 code="unsupported_parameter")
        if name in NOT_TRANSLATABLE and value is not None and strict:
            raise Untranslatable(f"{name}: {NOT_TRANSLATABLE[name]}", param=name)
        if name not in HANDLED and name not in IGNORED and name not in NOT_TRANSLATABLE \
                and name not in REFUSED:
            raise InvalidRequest(f"Unknown parameter: '{name}'.", param=name,
                                 code="unknown_parameter")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("Missing required parameter: 'model'.", param="model")
    if body.get("background"):
        raise InvalidRequest("background: background responses are not supported by the "
                             "gateway; stream instead", param="background",
                             code="unsupported_parameter")
    previous = body.get("previous_response_id")
    if previous is not None and (not isinstance(previous, str) or not previous):
        raise InvalidRequest("previous_response_id: expected a response id",
                             param="previous_response_id")
    limit = body.get("max_output_tokens")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit < 1):
        raise InvalidRequest("max_output_tokens: a positive integer is required",
                             param="max_output_tokens")
    metadata = body.get("metadata")
    if metadata is not None and not _valid_metadata(metadata):
        raise InvalidRequest("metadata: at most 16 string values, keys up to 64 characters "
                             "and values up to 512", param="metadata")
    items = input_items(body.get("input"))
    store = body.get("store")
    echo = {
        "instructions": body.get("instructions"),
        "max_output_tokens": limit,
        "metadata": metadata or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": previous,
        "reasoning": _reasoning_echo(body.get("reasoning")),
        "temperature": body.get("temperature"),
        "text": {"format": _format_echo(_object(body.get("text"), "text").get("format"))},
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p"),
        "truncation": body.get("truncation") or "disabled",
        "user": body.get("user"),
    }
    payload = _chat_fields(body, strict)
    payload["model"] = model
    return ResponsesRequest(model=model, payload=payload, input_items=items,
                            stream=bool(body.get("stream")), store=store is not False,
                            previous_response_id=previous, echo=echo, body=body)


def to_chat_payload(request: ResponsesRequest, history: list[dict[str, Any]], *,
                    strict: bool = True) -> Payload:
    """The payload routed: instructions, the stored conversation, then this turn's input."""
    messages: list[dict[str, Any]] = []
    instructions = request.echo.get("instructions")
    if instructions:
        if not isinstance(instructions, str):
            raise InvalidRequest("instructions: expected a string", param="instructions")
        messages.append({"role": "system", "content": instructions})
    for i, item in enumerate([*history, *request.input_items]):
        append_item(messages, item, f"input[{i - len(history)}]", strict=strict)
    payload = dict(request.payload)
    payload["messages"] = messages
    return payload


def native_payload(request: ResponsesRequest, history: list[dict[str, Any]]) -> Payload:
    """The body for a backend that serves /v1/responses itself. The gateway keeps the
    conversation, so the upstream gets it whole in `input` and keeps nothing (`store:
    false`); `metadata` and `previous_response_id` are the gateway's own."""
    body = {k: v for k, v in request.body.items()
            if k not in ("store", "previous_response_id", "metadata", "background")
            and v is not None}
    body["input"] = [*(_replayable(item) for item in history if _replays(item)),
                     *request.input_items]
    body["store"] = False
    return body


def _replays(item: dict[str, Any]) -> bool:
    # Reasoning without its encrypted content cannot be handed back to a model.
    return item.get("type") != "reasoning" or bool(item.get("encrypted_content"))


def _replayable(item: dict[str, Any]) -> dict[str, Any]:
    """A stored output item as input: without the ids the upstream never issued (it would
    look them up) and the output-only status."""
    if item.get("type") in ("message", "function_call", "function_call_output") and "id" in item:
        return {k: v for k, v in item.items() if k not in ("id", "status")}
    return item


def input_items(raw: Any) -> list[dict[str, Any]]:
    """`input` as a list of items: a string is one user message."""
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    if not isinstance(raw, list) or not raw:
        raise InvalidRequest("input: a string or a non-empty list of input items is required",
                             param="input")
    items = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise InvalidRequest(f"input[{i}]: expected an object", param=f"input[{i}]")
        items.append(item if "type" in item else {"type": "message", **item})
    return items


def _chat_fields(body: dict[str, Any], strict: bool) -> Payload:
    payload: Payload = {}
    for name in SAME_NAME:
        if body.get(name) is not None:
            payload[name] = body[name]
    if body.get("max_output_tokens") is not None:
        payload["max_tokens"] = body["max_output_tokens"]
    tools = body.get("tools")
    if tools:
        if not isinstance(tools, list):
            raise InvalidRequest("tools: expected an array of tools", param="tools")
        translated = [_tool(t, f"tools[{i}]", strict) for i, t in enumerate(tools)]
        if any(translated):
            payload["tools"] = [t for t in translated if t is not None]
    if body.get("tool_choice") is not None:
        choice = _tool_choice(body["tool_choice"], strict)
        if choice is not None and "tools" in payload:
            payload["tool_choice"] = choice
    fmt = _object(body.get("text"), "text").get("format")
    if fmt is not None:
        response_format = _response_format(fmt)
        if response_format is not None:
            payload["response_format"] = response_format
    verbosity = _object(body.get("text"), "text").get("verbosity")
    if verbosity is not None:
        payload["verbosity"] = verbosity
    effort = _object(body.get("reasoning"), "reasoning").get("effort")
    if effort is not None:
        payload["reasoning_effort"] = effort
    if body.get("stream"):
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
    return payload


def _tool(tool: Any, where: str, strict: bool) -> dict[str, Any] | None:
    kind = tool.get("type") if isinstance(tool, dict) else None
    if kind != "function" and isinstance(kind, str) and not strict:
        return None
    if kind != "function":
        raise Untranslatable(f"{where}.type: tool type {kind!r} is a built-in tool of "
                             "OpenAI's own service; only function tools can be translated",
                             param=f"{where}.type")
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidRequest(f"{where}.name: Missing required parameter.",
                             param=f"{where}.name")
    function: dict[str, Any] = {"name": name}
    if tool.get("description") is not None:
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    if tool.get("strict") is not None:
        function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def _tool_choice(choice: Any, strict: bool) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    if not strict and isinstance(choice, dict):
        return None
    raise Untranslatable("tool_choice: only auto, none, required or a function tool by name "
                         "can be translated", param="tool_choice")


def _response_format(fmt: Any) -> dict[str, Any] | None:
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    if kind == "json_schema":
        if not isinstance(fmt.get("schema"), dict) or not fmt.get("name"):
            raise InvalidRequest("text.format: json_schema needs a name and a schema",
                                 param="text.format")
        schema = {k: fmt[k] for k in ("name", "schema", "description", "strict")
                  if fmt.get(k) is not None}
        return {"type": "json_schema", "json_schema": schema}
    raise InvalidRequest(f"text.format.type: {kind!r} is not supported",
                         param="text.format.type")


def _format_echo(fmt: Any) -> dict[str, Any]:
    return fmt if isinstance(fmt, dict) else {"type": "text"}


def _reasoning_echo(reasoning: Any) -> dict[str, Any]:
    reasoning = reasoning if isinstance(reasoning, dict) else {}
    return {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")}


def _valid_metadata(metadata: Any) -> bool:
    return isinstance(metadata, dict) and len(metadata) <= 16 and all(
        isinstance(k, str) and len(k) <= 64 and isinstance(v, str) and len(v) <= 512
        for k, v in metadata.items())


def _object(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidRequest(f"{name}: expected an object", param=name)
    return value
