"""The built-in provider kinds' compiled options (`Backend.options`, tagged by `provider`):
frozen values the providers and the wire-format translation read on every request.

They sit here, below the kinds' registrations (gateway/provider_kinds), because the code that
reads them (gateway/providers, gateway/translate) is what those registrations build on. Each
accessor gives the kind's defaults for a Backend built without options (tests, tools).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gateway.types import Backend, ProviderOptions

# --- the OpenAI family: vllm, openai_compat, openai (and azure, below) ---------------------

MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens"]
# OpenAI's reasoning models (o-series, gpt-5): they take `reasoning_effort` and reject
# `max_tokens` ("not compatible with o-series models").
_REASONING_FAMILY = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)


def reasoning_model(model: str) -> bool:
    return _REASONING_FAMILY.match(model) is not None


@dataclass(frozen=True, slots=True)
class OpenAIFamilyOptions(ProviderOptions):
    """Which max-tokens field the upstream accepts ("auto": by model family)."""

    max_tokens_field: MaxTokensField = "auto"


@dataclass(frozen=True, slots=True)
class VllmOptions(OpenAIFamilyOptions):
    """vllm and openai_compat backends."""


@dataclass(frozen=True, slots=True)
class OpenAIOptions(OpenAIFamilyOptions):
    """api.openai.com backends."""


DEFAULT_FAMILY_OPTIONS = OpenAIFamilyOptions()


def family_options(backend: Backend) -> OpenAIFamilyOptions:
    """The backend's OpenAI-family options (the defaults for a Backend built without them)."""
    options = backend.options
    return options if isinstance(options, OpenAIFamilyOptions) else DEFAULT_FAMILY_OPTIONS


# --- azure -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AzureOptions(OpenAIFamilyOptions):
    """The deployment (None: the v1 API) and the api-version query parameter."""

    deployment: str | None = None
    api_version: str | None = None


DEFAULT_AZURE_OPTIONS = AzureOptions()


def azure_options(backend: Backend) -> AzureOptions:
    """The backend's Azure options (the defaults for a Backend built without them)."""
    options = backend.options
    return options if isinstance(options, AzureOptions) else DEFAULT_AZURE_OPTIONS


# --- anthropic -------------------------------------------------------------------------------

DEFAULT_ANTHROPIC_VERSION = "2023-06-01"
# Anthropic requires max_tokens; LiteLLM uses the same default (DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS).
DEFAULT_MAX_TOKENS = 4096


@dataclass(frozen=True, slots=True)
class AnthropicOptions(ProviderOptions):
    """The anthropic-version header, and max_tokens when the client sets none."""

    anthropic_version: str = DEFAULT_ANTHROPIC_VERSION
    default_max_tokens: int = DEFAULT_MAX_TOKENS


DEFAULT_ANTHROPIC_OPTIONS = AnthropicOptions()


def anthropic_options(backend: Backend) -> AnthropicOptions:
    """The backend's Anthropic options (the defaults for a Backend built without them)."""
    options = backend.options
    return options if isinstance(options, AnthropicOptions) else DEFAULT_ANTHROPIC_OPTIONS
