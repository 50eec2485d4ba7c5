"""The words Anthropic's Messages API and OpenAI's chat completions use for the same things,
both directions side by side: why a turn stopped, what kind of error it was, and how hard to
think (a reasoning effort against an extended-thinking budget, one table both ways).

Not inverses of each other: several Anthropic stop reasons are one OpenAI finish reason
(and back, `stop` means `end_turn` unless a stop sequence matched), and errors map from an
Anthropic type toward an upstream's client but from an HTTP status toward a Claude client.
"""

from __future__ import annotations

# Anthropic `stop_reason` → OpenAI `finish_reason` (upstream replies and streams).
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    # The model ran out of context mid-answer: a truncation, as `length` tells OpenAI clients.
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
# OpenAI `finish_reason` → Anthropic `stop_reason` (the front door's replies and streams).
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    # A blocked turn must not look like success to a Claude client.
    "content_filter": "refusal",
}
# HTTP status → Anthropic error type (the front door's error bodies and events).
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}
# Anthropic error type → (OpenAI type, code), for an upstream's errors about the request itself.
OPENAI_ERRORS = {
    "invalid_request_error": ("invalid_request_error", None),
    "request_too_large": ("invalid_request_error", "request_too_large"),
    "not_found_error": ("invalid_request_error", "not_found"),
    "permission_error": ("permission_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "billing_error": ("insufficient_quota", "insufficient_quota"),
}

# OpenAI `reasoning_effort` → Anthropic extended-thinking budget (its minimum is 1024): the one
# table; `effort_for_budget` reads it backwards.
THINKING_BUDGETS = {"low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 16384}
# The efforts every reasoning model of the OpenAI family takes (xhigh and max are newer).
COMMON_EFFORTS = ("low", "medium", "high")


def effort_for_budget(thinking: dict[str, object]) -> str:
    """A Claude client's thinking config as OpenAI's effort: the least effort whose budget
    covers it, `high` beyond; `adaptive` (no budget) leaves the depth to the model: medium."""
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int):
        return "medium"
    return next((e for e in COMMON_EFFORTS if budget <= THINKING_BUDGETS[e]), "high")
