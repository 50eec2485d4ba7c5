"""Redacted prompt and answer for the audit record of tenants that opted in
(`store_content: redacted`). Sensitive spans are replaced by typed placeholders before the
text is kept anywhere (queue, spool or database); without a detector nothing is kept."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from gateway.classify.profiler import scan_text
from gateway.routing.seams import Classifier
from gateway.types import AuditContent, Profile, RouteRequest, TenantDetector

MAX_CHARS = 64 * 1024  # of each of prompt and answer
TRUNCATED = " […truncated]"


async def capture(
    classifier: Classifier,
    request: RouteRequest,
    profile: Profile,
    body: bytes | None,
    events: list[bytes] | None,
    detectors: tuple[TenantDetector, ...] = (),
) -> AuditContent | None:
    if not classifier.can_redact:
        return None
    # Scanning is ~0.3 µs a character: off the event loop, whatever the size.
    return await asyncio.to_thread(_build, classifier, request, profile, body, events,
                                   detectors)


def _build(
    classifier: Classifier,
    request: RouteRequest,
    profile: Profile,
    body: bytes | None,
    events: list[bytes] | None,
    detectors: tuple[TenantDetector, ...],
) -> AuditContent:
    # What classification found is masked in the answer too: a model that repeats a name
    # from the prompt repeats what the prompt's redaction masked.
    scanner = classifier.redaction_scanner(request, detectors, profile)
    payload, _ = classifier.redact_payload(request, scanner)
    prompt = _bounded(scan_text(request.endpoint, payload))
    answer = _answer_text(body) if body is not None else _streamed_text(events or [])
    return AuditContent(prompt, classifier.redact_text(_bounded(answer), scanner))


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + TRUNCATED


def _answer_text(body: bytes) -> str:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return ""
    parts: list[str] = []
    for choice in _choices(obj):
        message = choice.get("message")
        if isinstance(message, dict):
            _add_text(parts, message.get("content"))
        _add_text(parts, choice.get("text"))
    return "\n".join(parts)


def _streamed_text(events: list[bytes]) -> str:
    pieces: list[str] = []
    for event in events:
        try:
            obj = orjson.loads(event)
        except orjson.JSONDecodeError:
            continue
        for choice in _choices(obj):
            delta = choice.get("delta")
            if isinstance(delta, dict):
                _add_text(pieces, delta.get("content"))
            _add_text(pieces, choice.get("text"))
    return "".join(pieces)


def _choices(obj: Any) -> list[dict[str, Any]]:
    choices = obj.get("choices") if isinstance(obj, dict) else None
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def _add_text(parts: list[str], value: Any) -> None:
    if isinstance(value, str) and value:
        parts.append(value)
