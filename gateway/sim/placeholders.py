"""Placeholder JSON values that conform to a JSON schema's types and required properties.

Used for tool-call arguments and `response_format: json_schema` answers: a client validating the
answer against its schema gets a valid, typed document, not prose.
"""

from __future__ import annotations

import math
from typing import Any

JsonValue = Any  # a decoded JSON document: dict, list, str, int, float, bool or None

_MAX_DEPTH = 8  # a recursive schema ($ref to itself) stops here
_STRING_FORMATS = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
}


def placeholder(schema: JsonValue, root: JsonValue | None = None, name: str = "") -> JsonValue:
    """A value of schema's type; objects carry their required properties, recursively."""
    return _value(schema, schema if root is None else root, name, 0)


def _value(schema: JsonValue, root: JsonValue, name: str, depth: int) -> JsonValue:
    if depth > _MAX_DEPTH:
        return None
    if not isinstance(schema, dict):  # `true` or a malformed schema: anything goes
        return _string({}, name)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _value(_resolve(ref, root), root, name, depth + 1)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return _value(_first_non_null(options), root, name, depth + 1)
    kind = _type_of(schema)
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, name, depth)
    if kind == "integer":
        return math.ceil(_number(schema, 1))
    if kind == "number":
        return float(_number(schema, 1.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, name)


def _type_of(schema: dict[str, JsonValue]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return "string"


def _object(schema: dict[str, JsonValue], root: JsonValue, depth: int) -> dict[str, JsonValue]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    names = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    return {key: _value(properties.get(key, {}), root, key, depth + 1) for key in names}


def _array(schema: dict[str, JsonValue], root: JsonValue, name: str, depth: int) -> list[JsonValue]:
    items = schema.get("items", {})
    count = max(_int(schema.get("minItems"), 1), 1)
    max_items = schema.get("maxItems")
    if isinstance(max_items, int):
        count = min(count, max_items)
    return [_value(items, root, name, depth + 1) for _ in range(count)]


def _string(schema: dict[str, JsonValue], name: str) -> str:
    text = _STRING_FORMATS.get(str(schema.get("format")), f"example_{name}" if name else "example")
    min_length = _int(schema.get("minLength"), 0)
    if len(text) < min_length:
        text += "x" * (min_length - len(text))
    max_length = schema.get("maxLength")
    if isinstance(max_length, int):
        text = text[:max_length]
    return text


def _number(schema: dict[str, JsonValue], default: float) -> float:
    value = default
    low, high = schema.get("minimum"), schema.get("maximum")
    exclusive_low = schema.get("exclusiveMinimum")
    if _is_number(exclusive_low):
        value = max(value, exclusive_low + 1)
    if _is_number(low):
        value = max(value, low)
    if _is_number(high):
        value = min(value, high)
    return value


def _is_number(value: JsonValue) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int(value: JsonValue, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _first_non_null(options: list[JsonValue]) -> JsonValue:
    for option in options:
        if not (isinstance(option, dict) and option.get("type") == "null"):
            return option
    return options[0]


def _resolve(ref: str, root: JsonValue) -> JsonValue:
    """Follow a local JSON pointer such as #/$defs/Address; anything else resolves to {}."""
    if not ref.startswith("#"):
        return {}
    node = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part]
    return node
