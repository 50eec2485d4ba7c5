"""Request-body schemas for the OpenAPI document of the inference routes.

Their handlers read the raw body themselves (only the routing fields are validated; the rest
travels untouched), so FastAPI cannot infer a body. Declared here, the schema tells clients
and fuzzers what to send; it is documentation, never used to validate a request."""

from __future__ import annotations

from typing import Any


def _body(required: list[str], properties: dict[str, Any], *,
          closed: bool = False) -> dict[str, Any]:
    """`closed`: the route refuses fields it does not know (the Anthropic and Responses
    doors do; the OpenAI door passes them on)."""
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": properties}
    if closed:
        schema["additionalProperties"] = False
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": schema}}}}


_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {"role": {"type": "string", "enum": ["system", "user", "assistant"]},
                   "content": {"type": "string"}},
}
_MODEL = {"type": "string", "minLength": 1}
_COMMON = {
    "model": _MODEL,
    "max_tokens": {"type": "integer", "minimum": 1},
    "stream": {"type": "boolean"},
}

CHAT = _body(["model", "messages"], {
    **_COMMON, "messages": {"type": "array", "minItems": 1, "items": _MESSAGE}})
COMPLETIONS = _body(["model", "prompt"], {**_COMMON, "prompt": {"type": "string"}})
EMBEDDINGS = _body(["model", "input"], {
    "model": _MODEL,
    "input": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}})
MESSAGES = _body(["model", "messages", "max_tokens"], {
    **_COMMON,
    "messages": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["role", "content"],
        "properties": {"role": {"type": "string", "enum": ["user", "assistant"]},
                       "content": {"type": "string"}}}},
    "system": {"type": "string"}}, closed=True)
COUNT_TOKENS = _body(["model", "messages"], {
    "model": _MODEL,
    "messages": MESSAGES["requestBody"]["content"]["application/json"]["schema"]["properties"][
        "messages"]}, closed=True)
RESPONSES = _body(["model", "input"], {
    "model": _MODEL,
    "input": {"oneOf": [{"type": "string"}, {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["role", "content"],
        "properties": {"role": {"type": "string", "enum": ["user", "system", "developer",
                                                             "assistant"]},
                       "content": {"type": "string"}}}}]},
    "instructions": {"type": "string"},
    "max_output_tokens": {"type": "integer", "minimum": 1},
    "stream": {"type": "boolean"},
    "store": {"type": "boolean"}}, closed=True)
