"""Redaction: sensitive spans become typed placeholders ("[EMAIL_1]") before a prompt leaves
for a backend, and placeholders in the reply become the originals again, also mid-stream.

The placeholder → original map lives in memory for one request only; it is never logged,
serialised or shown (its repr names no values).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from gateway.types import SensitiveSpan

_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_\d+\]")
_LABEL_CHARS = re.compile(r"[^A-Z0-9]+")


class RedactionMap:
    """Placeholder → original value for one request. Same value and type → same placeholder."""

    __slots__ = ("_by_key", "_counters", "_originals", "_reserved")

    def __init__(self) -> None:
        self._originals: dict[str, str] = {}
        self._by_key: dict[tuple[str, str], str] = {}
        self._counters: dict[str, int] = {}
        self._reserved: set[str] = set()

    def __len__(self) -> int:
        return len(self._originals)

    def __repr__(self) -> str:
        return f"RedactionMap({len(self._originals)} placeholders)"

    def __contains__(self, placeholder: object) -> bool:
        return placeholder in self._originals

    def placeholders(self) -> Iterator[str]:
        return iter(self._originals)

    def original(self, placeholder: str) -> str | None:
        return self._originals.get(placeholder)

    def reserve(self, text: str) -> None:
        """Placeholder-shaped strings already in the request's own text are never handed out,
        so restoring a reply cannot rewrite what the user literally wrote."""
        if "[" in text:
            self._reserved.update(_PLACEHOLDER.findall(text))

    def placeholder_for(self, label: str, value: str) -> str:
        """The placeholder standing for `value`; a new one unless this value was seen."""
        key = (label, value)
        existing = self._by_key.get(key)
        if existing is not None:
            return existing
        number = self._counters.get(label, 0)
        while True:
            number += 1
            placeholder = f"[{label}_{number}]"
            if placeholder not in self._originals and placeholder not in self._reserved:
                break
        self._counters[label] = number
        self._by_key[key] = placeholder
        self._originals[placeholder] = value
        return placeholder


def placeholder_label(span_type: str) -> str:
    """EMAIL, PHONE, PERSON, …; every credential is SECRET (its kind would say too much);
    tenant detectors keep their name (CUSTOM_PROJECT_CODES)."""
    if span_type.startswith("secret."):
        return "SECRET"
    return _LABEL_CHARS.sub("_", span_type.upper()).strip("_") or "REDACTED"


def redact(
    text: str, spans: Iterable[SensitiveSpan], into: RedactionMap | None = None
) -> tuple[str, RedactionMap]:
    """Replace each span with its placeholder. `spans` must not overlap (the scanner's output
    never does). Pass `into` to share numbering across the strings of one request."""
    mapping = into if into is not None else RedactionMap()
    mapping.reserve(text)
    pieces: list[str] = []
    position = 0
    for span in sorted(spans, key=lambda s: s.start):
        if span.start < position or span.end > len(text) or span.end <= span.start:
            continue  # overlapping or out of range: keep the text as is
        pieces.append(text[position:span.start])
        value = text[span.start:span.end]
        pieces.append(mapping.placeholder_for(placeholder_label(span.type), value))
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces), mapping


def restore(text: str, mapping: RedactionMap) -> str:
    """Put the originals back; placeholders the map does not know are left untouched."""
    if not len(mapping):
        return text
    return _PLACEHOLDER.sub(lambda m: mapping.original(m.group()) or m.group(), text)


class StreamRestorer:
    """Restores placeholders in a streamed reply, chunk by chunk.

    Only a tail that could still become a known placeholder ("[EMA" when "[EMAIL_1]" exists)
    is held back; everything else is released at once.
    """

    __slots__ = ("_buffer", "_mapping", "_prefixes")

    def __init__(self, mapping: RedactionMap) -> None:
        self._mapping = mapping
        self._buffer = ""
        self._prefixes = frozenset(
            p[:i] for p in mapping.placeholders() for i in range(1, len(p))
        )

    def feed(self, chunk: str) -> str:
        buffer = self._buffer + chunk
        hold = buffer.rfind("[")
        if hold != -1 and buffer[hold:] in self._prefixes:
            self._buffer = buffer[hold:]
            return restore(buffer[:hold], self._mapping)
        self._buffer = ""
        return restore(buffer, self._mapping)

    def flush(self) -> str:
        """The held-back tail at the end of the stream (it never became a placeholder)."""
        rest, self._buffer = self._buffer, ""
        return rest
