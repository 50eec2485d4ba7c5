"""The text of an OpenAI chat payload: every message's content (strings and text parts), legacy
function calls and tool-call arguments, and the free-text fields beside the messages that
also reach the upstream (participant names, predicted output, the end-user identifiers
`user`, `safety_identifier` and `prompt_cache_key`, and `metadata` values); extracted for
scanning, or redacted in a copy.

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


# Top-level strings an OpenAI client sends beside the messages, often an e-mail address or a
# customer id: OpenAI and other upstreams keep them with the request.
IDENTITY_FIELDS = ("user", "safety_identifier", "prompt_cache_key")


class SpanScanner(Protocol):
    def scan_for_redaction(self, text: str) -> list[SensitiveSpan]: ...


def extract_chat_text(payload: Payload) -> str:
    """All user-supplied text of a chat request, one block per string, for scanning: the
    messages first (so their offsets do not depend on the other fields), then the rest."""
    return _SEPARATOR.join(_chat_strings(payload))


def redact_chat_payload(payload: Payload, scanner: SpanScanner) -> tuple[Payload, RedactionMap]:
    """A copy of the payload with every sensitive span in every message and every free-text
    field replaced by its placeholder; one map (one numbering) for the whole request.
    `metadata` keeps its keys (the caller's own names); only the values are redacted."""
    mapping = RedactionMap()
    for text in _chat_strings(payload):
        mapping.reserve(text)

    def redact_string(text: str) -> str:
        spans = scanner.scan_for_redaction(text)
        return redact(text, spans, into=mapping)[0] if spans else text

    def redact_arguments(arguments: str) -> str:
        """Tool arguments are JSON. Scanned whole (a key name like "password" is context for
        its value); replaced in place when no span touches a quote or an escape, so the JSON
        stays valid; otherwise each string value is redacted on its own and re-serialised."""
        spans = scanner.scan_for_redaction(arguments)
        if not spans:
            return arguments
        if not any('"' in arguments[x.start:x.end] or "\\" in arguments[x.start:x.end]
                   for x in spans):
            return redact(arguments, spans, into=mapping)[0]
        try:
            parsed = json.loads(arguments)
            return json.dumps(_redacted_json(parsed, redact_string), ensure_ascii=False)
        except (ValueError, RecursionError):  # not JSON, or nested deeper than we can walk
            return redact(arguments, spans, into=mapping)[0]

    rewrite = _Rewriter(redact_string, redact_arguments)
    redacted = dict(payload)
    messages = payload.get("messages")
    if isinstance(messages, list):
        redacted["messages"] = [rewrite.message(m) for m in messages]
    redacted.update(redact_fields(payload, redact_string))
    prediction = payload.get("prediction")
    if isinstance(prediction, dict) and "content" in prediction:
        redacted["prediction"] = {**prediction,
                                  "content": rewrite.content(prediction["content"])}
    return redacted, mapping


def field_strings(payload: Payload) -> Iterator[str]:
    """The identity fields and `metadata` values of any OpenAI request (chat, completions,
    embeddings): a few short strings, so scanning them costs next to nothing."""
    for field in IDENTITY_FIELDS:
        value = payload.get(field)
        if isinstance(value, str) and value:
            yield value
    metadata = payload.get("metadata")
    if isinstance(metadata, dict):
        for value in metadata.values():
            if isinstance(value, str) and value:
                yield value


def redact_fields(payload: Payload, redact_string: Callable[[str], str]) -> dict[str, Any]:
    """The redacted identity fields and `metadata` (keys kept), to lay over a copy of the
    payload; only the fields present."""
    fields: dict[str, Any] = {}
    for field in IDENTITY_FIELDS:
        value = payload.get(field)
        if isinstance(value, str) and value:
            fields[field] = redact_string(value)
    metadata = payload.get("metadata")
    if isinstance(metadata, dict):
        fields["metadata"] = {k: redact_string(v) if isinstance(v, str) and v else v
                              for k, v in metadata.items()}
    return fields


def prefix_text(endpoint_is_chat: bool, payload: Payload, chars: int) -> str:
    """The first `chars` characters the model reads, without walking the whole prompt."""
    if not endpoint_is_chat:
        prompt = payload.get("prompt")
        return prompt[:chars] if isinstance(prompt, str) else ""
    parts: list[str] = []
    size = 0
    for text in _message_strings(payload):
        parts.append(text[: chars - size])
        size += len(parts[-1])
        if size >= chars:
            break
    return "\n".join(parts)


def _chat_strings(payload: Payload) -> Iterator[str]:
    yield from _message_strings(payload)
    messages = payload.get("messages")
    for message in messages if isinstance(messages, list) else ():
        name = message.get("name") if isinstance(message, dict) else None
        if isinstance(name, str) and name:
            yield name  # the participant's name, e.g. "marta_kowalczyk"
    prediction = payload.get("prediction")
    if isinstance(prediction, dict):
        yield from _content_strings(prediction.get("content"))
    yield from field_strings(payload)


def _message_strings(payload: Payload) -> Iterator[str]:
    """What the model reads, in order: content and tool-call arguments."""
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


def content_text(content: Any) -> str:
    """A message's text: the string, or its text parts joined (images and audio carry none)."""
    return content if isinstance(content, str) else "\n".join(_content_strings(content))


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
        if "content" in message:
            new["content"] = self.content(message["content"])
        name = message.get("name")
        if isinstance(name, str) and name:
            new["name"] = self._text(name)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            new["tool_calls"] = [self._call(call) for call in calls]
        legacy = message.get("function_call")
        if isinstance(legacy, dict):
            new["function_call"] = self._function(legacy)
        return new

    def content(self, content: Any) -> Any:
        """A string or a list of parts (text parts redacted, the others shared)."""
        if isinstance(content, str):
            return self._text(content)
        if isinstance(content, list):
            return [self._part(part) for part in content]
        return content

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


__all__: Sequence[str] = (
    "IDENTITY_FIELDS", "SpanScanner", "extract_chat_text", "field_strings", "redact_chat_payload",
    "redact_fields",
)
