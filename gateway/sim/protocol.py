"""Request parsing: OpenAI/vLLM JSON bodies → frozen request types, with vLLM's 400s.

Only the fields the sim acts on are read; unknown fields are ignored, as vLLM does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from gateway.sim.config import SimConfig
from gateway.sim.errors import (
    SimError,
    bad_request,
    context_length_error,
    max_tokens_too_large,
    prompt_too_long,
)
from gateway.sim.placeholders import JsonValue

Turn = tuple[str, str]  # (role, text) as the chat template sees it
PromptInput = str | tuple[int, ...]  # text or pre-tokenized ids

_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


@dataclass(frozen=True)
class GenerationOptions:
    max_tokens: int | None
    ignore_eos: bool
    seed: int | None
    stream: bool
    include_usage: bool
    continuous_usage: bool


@dataclass(frozen=True)
class ToolFunction:
    name: str
    parameters: JsonValue  # the function's JSON schema


@dataclass(frozen=True)
class ChatRequest:
    model: str | None
    turns: tuple[Turn, ...]
    tools_text: str | None  # tool definitions as the template renders them
    tools: tuple[ToolFunction, ...]
    forced_tool: str | None  # the function the answer must call, if any
    response_schema: JsonValue | None  # response_format json_schema's schema
    json_object: bool  # response_format json_object
    options: GenerationOptions


@dataclass(frozen=True)
class CompletionRequest:
    model: str | None
    prompt: PromptInput
    options: GenerationOptions


@dataclass(frozen=True)
class EmbeddingRequest:
    model: str | None
    inputs: tuple[PromptInput, ...]
    base64: bool
    dimensions: int | None


def decode_json(body: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise bad_request(f"Invalid JSON body: {exc}") from exc
    if not isinstance(data, dict):
        raise bad_request("The request body must be a JSON object")
    return data


def model_not_found(config: SimConfig, model: str) -> SimError:
    message = f"The model `{model}` does not exist. Valid aliases: {config.model_name}."
    return SimError(404, message, "model")


def check_model(config: SimConfig, model: str | None) -> None:
    if model is not None and model != config.model_name:
        raise model_not_found(config, model)


def check_token_ids(config: SimConfig, token_ids: tuple[int, ...]) -> None:
    for token_id in token_ids:
        if not 0 <= token_id < config.vocab_size:
            raise bad_request(f"Token id {token_id} is out of vocabulary", "prompt")


def resolve_max_tokens(config: SimConfig, prompt_tokens: int, requested: int | None) -> int:
    """The token cap of a request, as vLLM 0.32 decides it (or an older vLLM, see
    SimConfig.context_overflow).

    A prompt that fills the context and a max_tokens above max_model_len are 400s; a
    max_tokens that merely overruns the room left is quietly cut to it (the answer then ends
    with finish_reason "length"), which is what a real 0.32 server does.
    """
    room = config.max_model_len - prompt_tokens
    if room <= 0:
        raise prompt_too_long(config.max_model_len, prompt_tokens)
    if requested is None:
        return min(config.default_max_tokens, room)
    if requested > room and config.context_overflow == "reject":
        raise context_length_error(config.max_model_len, prompt_tokens, requested)
    if requested > config.max_model_len:
        raise max_tokens_too_large(config.max_model_len, requested)
    return min(requested, room)


def parse_chat(body: dict[str, Any]) -> ChatRequest:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise bad_request("`messages` must be a non-empty list", "messages")
    turns = tuple(_turn(m) for m in messages)
    tools = _tools(body.get("tools"))
    forced = _forced_tool(body.get("tool_choice"), tools)
    schema, json_object = _response_format(body.get("response_format"))
    return ChatRequest(
        model=_model(body),
        turns=turns,
        tools_text=orjson.dumps(body["tools"]).decode() if tools else None,
        tools=tools,
        forced_tool=forced,
        response_schema=schema,
        json_object=json_object,
        options=_options(body),
    )


def parse_completion(body: dict[str, Any]) -> CompletionRequest:
    prompts = _inputs(body.get("prompt"), "prompt")
    if len(prompts) != 1:
        raise bad_request("The simulator takes exactly one prompt per request", "prompt")
    return CompletionRequest(_model(body), prompts[0], _options(body))


def parse_embedding(body: dict[str, Any]) -> EmbeddingRequest:
    inputs = _inputs(body.get("input"), "input")
    if not inputs:
        raise bad_request("`input` must not be empty", "input")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64", None):
        raise bad_request("`encoding_format` must be 'float' or 'base64'", "encoding_format")
    dimensions = _optional_int(body, "dimensions", minimum=1)
    return EmbeddingRequest(_model(body), inputs, encoding == "base64", dimensions)


def turns_of(messages: Any) -> tuple[Turn, ...]:
    if not isinstance(messages, list):
        raise bad_request("`messages` must be a list", "messages")
    return tuple(_turn(m) for m in messages)


def content_text(content: Any) -> str:
    """The text of a message content: a string or a list of parts (non-text parts as tags)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                text = part.get("text") if kind in ("text", "input_text", None) else f"<{kind}>"
                texts.append(text if isinstance(text, str) else "")
        return "".join(texts)
    raise bad_request("Message content must be a string or a list of parts", "messages")


def _model(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise bad_request("`model` must be a string", "model")
    return model


def _turn(message: Any) -> Turn:
    if not isinstance(message, dict) or message.get("role") not in _ROLES:
        raise bad_request(f"Each message needs a role among {sorted(_ROLES)}", "messages")
    text = content_text(message.get("content"))
    calls = message.get("tool_calls")
    if calls:
        text += orjson.dumps(calls).decode()
    return (message["role"], text)


def _tools(tools: Any) -> tuple[ToolFunction, ...]:
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise bad_request("`tools` must be a list", "tools")
    parsed: list[ToolFunction] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad_request("Each tool needs function.name", "tools")
        parsed.append(ToolFunction(function["name"], function.get("parameters") or {}))
    return tuple(parsed)


def _forced_tool(choice: Any, tools: tuple[ToolFunction, ...]) -> str | None:
    if choice is None or choice in ("none", "auto"):
        return None
    if not tools:
        raise bad_request("When using `tool_choice`, `tools` must be set.", "tool_choice")
    if choice == "required":
        return tools[0].name
    if isinstance(choice, dict) and isinstance(choice.get("allowed_tools"), dict):
        allowed = choice["allowed_tools"]  # {"type": "allowed_tools", ...}
        if allowed.get("mode") != "required":
            return None
        listed = allowed.get("tools")
        first = listed[0] if isinstance(listed, list) and listed else None
        has_function = isinstance(first, dict) and isinstance(first.get("function"), dict)
        choice = first if has_function else {"function": {"name": tools[0].name}}
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if isinstance(name, str):
        if name not in {t.name for t in tools}:
            raise bad_request(f"Tool '{name}' is not among the given tools", "tool_choice")
        return name
    raise bad_request("Invalid `tool_choice`", "tool_choice")


def _response_format(value: Any) -> tuple[JsonValue | None, bool]:
    if value is None:
        return None, False
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "json_schema":
        spec = value.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return (schema if isinstance(schema, dict) else {}), False
    if kind == "json_object":
        return None, True
    if kind == "text":
        return None, False
    raise bad_request("`response_format.type` must be text, json_object or json_schema")


def _options(body: dict[str, Any]) -> GenerationOptions:
    n = body.get("n", 1)
    if n not in (None, 1):
        raise bad_request("The simulator supports n=1 only", "n")
    max_tokens = _optional_int(body, "max_completion_tokens", minimum=1)
    if max_tokens is None:
        max_tokens = _optional_int(body, "max_tokens", minimum=1)
    stream = body.get("stream") is True
    stream_options = body.get("stream_options")
    if stream_options is not None and not stream:
        raise bad_request(
            "Stream options can only be defined when `stream=True`. (parameter=stream_options)",
            "stream_options",
        )
    stream_options = stream_options if isinstance(stream_options, dict) else {}
    return GenerationOptions(
        max_tokens=max_tokens,
        ignore_eos=body.get("ignore_eos") is True,
        seed=_optional_int(body, "seed", minimum=None),
        stream=stream,
        include_usage=stream_options.get("include_usage") is True,
        continuous_usage=stream_options.get("continuous_usage_stats") is True,
    )


def _optional_int(body: dict[str, Any], key: str, *, minimum: int | None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise bad_request(f"`{key}` must be an integer", key)
    if minimum is not None and value < minimum:
        message = f"{key} must be at least {minimum}, got {value}."
        raise bad_request(f"{message} (parameter={key}, value={value})", key)
    return value


def _inputs(value: Any, field: str) -> tuple[PromptInput, ...]:
    """string | string[] | int[] | int[][] → one entry per prompt."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        if value and all(isinstance(t, int) and not isinstance(t, bool) for t in value):
            return (tuple(value),)
        entries: list[PromptInput] = []
        for item in value:
            if isinstance(item, str):
                entries.append(item)
            elif isinstance(item, list) and all(isinstance(t, int) for t in item):
                entries.append(tuple(item))
            else:
                raise bad_request(f"`{field}` entries must be strings or token-id lists", field)
        return tuple(entries)
    raise bad_request(f"`{field}` must be a string or a list", field)
