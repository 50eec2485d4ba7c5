"""RequestClassifier: every fact the policy routes on, computed once per request.

Tokens (exact, or a proven bound when exactness cannot change the route), complexity (the
probability a cheap model fails where a strong one succeeds) and sensitivity (categories and
offsets, never values). Complexity and sensitivity are seams (protocols), so tests and
deployments can swap their implementations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.classify.complexity import DEFAULT_THRESHOLDS, classify
from gateway.classify.tokens import TokenCounter
from gateway.types import Complexity, Endpoint, Payload, Profile, RouteRequest, SensitiveSpan

COMPLEXITY_TEXT_CHARS = 4000  # the question is what matters; long context adds little signal


class ComplexityEstimator(Protocol):
    def p_strong(self, text: str) -> float: ...


class SensitivityDetector(Protocol):
    def scan(self, text: str) -> list[SensitiveSpan]: ...


class RequestClassifier:
    def __init__(
        self,
        tokens: TokenCounter,
        complexity: ComplexityEstimator | None = None,
        sensitivity: SensitivityDetector | None = None,
    ) -> None:
        self._tokens = tokens
        self._complexity = complexity
        self._sensitivity = sensitivity

    async def profile(
        self,
        request: RouteRequest,
        thresholds: Sequence[int] = (),
        complexity_thresholds: tuple[float, float] = DEFAULT_THRESHOLDS,
    ) -> Profile:
        """`thresholds`: prompt sizes where the route changes (exact counting only matters
        near them); `complexity_thresholds`: p_strong cut-offs for low/medium/high."""
        count = await self._tokens.count(request.endpoint, request.payload, thresholds)
        complexity = None
        if self._complexity is not None and request.endpoint is not Endpoint.EMBEDDINGS:
            p = self._complexity.p_strong(question_text(request.endpoint, request.payload))
            complexity = Complexity(p, classify(p, complexity_thresholds))
        spans: tuple[SensitiveSpan, ...] = ()
        if self._sensitivity is not None:
            spans = tuple(self._sensitivity.scan(scan_text(request.endpoint, request.payload)))
        return Profile(
            prompt_tokens=count.tokens,
            max_output_tokens=request.max_output_tokens,
            complexity=complexity,
            sensitivity=tuple(sorted({s.category for s in spans})),
            spans=spans,
            prompt_tokens_exact=count.exact,
            prompt_tokens_max=count.upper_bound,
        )


def question_text(endpoint: Endpoint, payload: Payload) -> str:
    """What the model is asked: the last user message (chat) or the prompt's tail."""
    if endpoint is Endpoint.CHAT:
        messages = payload.get("messages")
        for message in reversed(messages if isinstance(messages, list) else []):
            if isinstance(message, dict) and message.get("role") == "user":
                return _text_of(message.get("content"))[-COMPLEXITY_TEXT_CHARS:]
        return ""
    prompt = payload.get("prompt")
    return prompt[-COMPLEXITY_TEXT_CHARS:] if isinstance(prompt, str) else ""


def scan_text(endpoint: Endpoint, payload: Payload) -> str:
    """Everything that would leave the zone, joined so offsets index one string."""
    if endpoint is Endpoint.CHAT:
        messages = payload.get("messages")
        return "\n".join(
            _text_of(m.get("content")) for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict)
        )
    value = payload.get("prompt" if endpoint is Endpoint.COMPLETIONS else "input")
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(v for v in value if isinstance(v, str))
    return ""


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""
