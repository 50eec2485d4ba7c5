"""Body rules of OpenAI's own API (and Azure's), applied before a request leaves for them.

Pure functions on the gateway's private copy of the body. OpenAI rejects what a vLLM server
shrugs off: `metadata` without `store: true` (400 "The 'metadata' parameter is only allowed
when 'store' is enabled") and `max_tokens` on reasoning models (o-series, gpt-5), which take
`max_completion_tokens` instead.
"""

from __future__ import annotations

import re

from gateway.types import Backend, Payload
from gateway.types.provider_options import family_options

# Families that reject `max_tokens` ("not compatible with o-series models"). Older models
# accept both fields, so renaming is only needed here.
_COMPLETION_TOKENS_FAMILY = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")


def drop_cache_control(body: Payload) -> None:
    """Anthropic's prompt-cache breakpoints on content parts (from the Messages front door or
    a client that knows them) mean nothing to OpenAI, which caches by itself and refuses
    unknown part fields. Copies only the messages that carry one."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    copied: list[object] | None = None  # the client's list is shared: never changed
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(p, dict) and "cache_control" in p for p in content
        ):
            parts = [{k: v for k, v in p.items() if k != "cache_control"}
                     if isinstance(p, dict) else p for p in content]
            copied = copied or list(messages)
            copied[i] = {**message, "content": parts}
    if copied is not None:
        body["messages"] = copied


def adapt_anthropic_fields(body: Payload, *, reasons: bool) -> None:
    """What a Claude client sent through the Messages front door, for an OpenAI-family
    backend: `anthropic_beta` is dropped, extended `thinking` becomes `reasoning_effort`
    where the model takes it (`reasons`), and earlier turns' signed thinking blocks, which
    only Anthropic can read, are left out."""
    body.pop("anthropic_beta", None)
    thinking = body.pop("thinking", None)
    if not isinstance(thinking, dict):
        return
    if reasons and "reasoning_effort" not in body:
        body["reasoning_effort"] = reasoning_effort(thinking)
    messages = body.get("messages")
    if isinstance(messages, list) and any(
        isinstance(m, dict) and "thinking_blocks" in m for m in messages
    ):
        body["messages"] = [
            {k: v for k, v in m.items() if k != "thinking_blocks"} if isinstance(m, dict) else m
            for m in messages
        ]


def reasoning_effort(thinking: dict[str, object]) -> str:
    """An Anthropic thinking budget as OpenAI's effort (the inverse of the Anthropic
    adapter's effort → budget table); `adaptive` leaves the depth to the model: medium."""
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int):
        return "medium"
    return "low" if budget <= 1024 else "medium" if budget <= 2048 else "high"


def uses_max_completion_tokens(model: str) -> bool:
    return _COMPLETION_TOKENS_FAMILY.match(model) is not None


def rename_max_tokens(body: Payload, field: str) -> None:
    """Carry whichever max-tokens field the client sent over to `field`; when both were
    sent, `max_completion_tokens` wins, as at OpenAI."""
    other = "max_tokens" if field == "max_completion_tokens" else "max_completion_tokens"
    if other not in body:
        return
    value = body.pop(other)
    if value is not None and (body.get(field) is None or other == "max_completion_tokens"):
        body[field] = value


def clean_for_openai(body: Payload, backend: Backend) -> None:
    if "metadata" in body and body.get("store") is not True:
        # Clients (and other gateways) use `metadata` for their own tags; OpenAI would 400.
        del body["metadata"]
    drop_cache_control(body)
    field = family_options(backend).max_tokens_field
    if field == "auto":
        if not uses_max_completion_tokens(backend.model):
            return
        field = "max_completion_tokens"
    rename_max_tokens(body, field)
