"""Body rules of OpenAI's own API (and Azure's), applied before a request leaves for them.

Pure functions on the gateway's private copy of the body. OpenAI rejects what a vLLM server
shrugs off: `metadata` without `store: true` (400 "The 'metadata' parameter is only allowed
when 'store' is enabled") and `max_tokens` on reasoning models (o-series, gpt-5), which take
`max_completion_tokens` instead.
"""

from __future__ import annotations

from gateway.types import Backend, Payload
from gateway.types.provider_options import family_options, reasoning_model

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


def uses_max_completion_tokens(model: str) -> bool:
    """The reasoning models reject `max_tokens` ("not compatible with o-series models");
    older models accept both fields, so renaming is only needed for these."""
    return reasoning_model(model)


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
