"""The text of an OpenAI chat payload: every message's content (strings and text parts), legacy
function calls and tool-call arguments; extracted for scanning, or redacted in a copy.

The caller's payload is never mutated: redaction returns a new payload that shares the
untouched parts (images, tools, sampling parameters) with the original.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from gateway.classify.redaction import RedactionMap, redact
from gateway.types import Payload, SensitiveSpan

_SEPARATOR = "\n\n"


class SpanScanner(Protocol):
    def scan(self, text: str) -> list[SensitiveSpan]: ...


def extract_chat_text(payload: Payload) -> str:
    """All user-supplied text of a chat request, one block per string, for scanning."""
    return _SEPARATOR.join(_chat_strings(payload))


def redact_chat_payload(payload: Payload, scanner: SpanScanner) -> tuple[Payload, RedactionMap]:
    """A copy of the payload with every sensitive span in every message replaced by its
    placeholder; one map (one numbering) for the whole request."""
    mapping = RedactionMap()
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return payload, mapping
    for text in _chat_strings(payload):
        mapping.reserve(text)

    def redact_string(text: str) -> str:
        spans = scanner.scan(text)
        return redact(text, spans, into=mapping)[0] if spans else text

    def redact_arguments(arguments: str) -> str:
        """Tool arguments are JSON. Scanned whole (a key name like "password" is context for
        its value); replaced in place when no span touches a quote or an escape, so the JSON
        stays valid; otherwise each string value is redacted on its own and re-serialised."""
        spans = scanner.scan(arguments)
        if not spans:
            return arguments
        if not any('"' in arguments[x.start:x.end] or "\\" in arguments[x.start:x.end]
                   for x in spans):
            return redact(arguments, spans, into=mapping)[0]
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return redact(arguments, spans, into=mapping)[0]
        return json.dumps(_redacted_json(parsed, redact_string), ensure_ascii=False)

    rewrite = _Rewriter(redact_string, redact_arguments)
    new_messages = [rewrite.message(m) for m in messages]
    return {**payload, "messages": new_messages}, mapping


def prefix_text(endpoint_is_chat: bool, payload: Payload, chars: int) -> str:
    """The first `chars` characters the model reads, without walking the whole prompt."""
    if not endpoint_is_chat:
        prompt = payload.get("prompt")
        return prompt[:chars] if isinstance(prompt, str) else ""
    parts: list[str] = []
    size = 0
    for text in _chat_strings(payload):
        parts.append(text[: chars - size])
        size += len(parts[-1])
        if size >= chars:
            break
    return "\n".join(parts)


def _chat_strings(payload: Payload) -> Iterator[str]:
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return
    for message in messages:
        if not isinstance(message, dict):
            continue
        yield from _content_strings(message.get("content"))
        for call in _tool_calls(message):
            arguments = call.get("arguments")
            if isinstance(arguments, str) and arguments:
                yield arguments


def _content_strings(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        if content:
            yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                yield part["text"]


def _tool_calls(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The function objects of `tool_calls` and of the legacy `function_call`."""
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                yield function
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        yield legacy


class _Rewriter:
    """Rebuilds messages with redacted strings, sharing every untouched part."""

    def __init__(self, text: Callable[[str], str], arguments: Callable[[str], str]) -> None:
        self._text = text
        self._arguments = arguments

    def message(self, message: Any) -> Any:
        if not isinstance(message, dict):
            return message
        new = dict(message)
        content = message.get("content")
        if isinstance(content, str):
            new["content"] = self._text(content)
        elif isinstance(content, list):
            new["content"] = [self._part(part) for part in content]
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            new["tool_calls"] = [self._call(call) for call in calls]
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            new["function_call"] = self._function(legacy)
        return new

    def _part(self, part: Any) -> Any:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return {**part, "text": self._text(part["text"])}
        return part

    def _call(self, call: Any) -> Any:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            return {**call, "function": self._function(call["function"])}
        return call

    def _function(self, function: dict[str, Any]) -> dict[str, Any]:
        arguments = function.get("arguments")
        if not isinstance(arguments, str) or not arguments:
            return function
        return {**function, "arguments": self._arguments(arguments)}


def _redacted_json(value: Any, redact_string: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact_string(value)
    if isinstance(value, list):
        return [_redacted_json(v, redact_string) for v in value]
    if isinstance(value, dict):
        return {k: _redacted_json(v, redact_string) for k, v in value.items()}
    return value


__all__: Sequence[str] = ("SpanScanner", "extract_chat_text", "redact_chat_payload")
