"""Body rules of OpenAI's own API (and Azure's), applied before a request leaves for them.

Pure functions on the gateway's private copy of the body. OpenAI rejects what a vLLM server
shrugs off: `metadata` without `store: true` (400 "The 'metadata' parameter is only allowed
when 'store' is enabled") and `max_tokens` on reasoning models (o-series, gpt-5), which take
`max_completion_tokens` instead.
"""

from __future__ import annotations

import re

from gateway.types import Backend, Payload

# Families that reject `max_tokens` ("not compatible with o-series models"). Older models
# accept both fields, so renaming is only needed here.
_COMPLETION_TOKENS_FAMILY = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")


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
    field = backend.max_tokens_field
    if field == "auto":
        if not uses_max_completion_tokens(backend.model):
            return
        field = "max_completion_tokens"
    rename_max_tokens(body, field)
