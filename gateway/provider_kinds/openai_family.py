"""The OpenAI-compatible kinds: vllm (a vLLM engine: scraped, /tokenize), openai_compat (any
other `/v1/chat/completions` server) and openai (api.openai.com: exact token counts in the
model's encoding, the Responses API natively). Azure, a member of the family with its own
URLs, is azure.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field

from gateway.provider_kinds.kind import OptionsSpec, ProviderKind
from gateway.types import Backend, ProviderOptions

# OpenAI models by name: the GPT-4o generation onwards use o200k, GPT-4 and GPT-3.5 cl100k.
_O200K_MODELS = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4",
                 "gpt-oss", "codex")
_CL100K_MODELS = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada")
REFERENCE_ENCODING = "o200k_base"
# OpenAI's reasoning models (o-series, gpt-5): they take `reasoning_effort`, and
# `max_completion_tokens` where they reject `max_tokens` ("not compatible with o-series").
_REASONING_FAMILY = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)


def openai_encoding(model: str) -> str:
    """The encoding an OpenAI model name implies (o200k for names not recognised)."""
    name = model.lower().rsplit("/", 1)[-1]
    if name.startswith(_O200K_MODELS):
        return "o200k_base"
    if name.startswith(_CL100K_MODELS):
        return "cl100k_base"
    return REFERENCE_ENCODING


def reasoning_model(model: str) -> bool:
    return _REASONING_FAMILY.match(model) is not None


MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens"]


class OpenAIFamilySpec(OptionsSpec):
    max_tokens_field: MaxTokensField | None = Field(
        default=None,
        description="OpenAI family: the field that carries the client's token limit upstream; "
        "auto (default) renames max_tokens to max_completion_tokens for o-series and gpt-5",
    )


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


def _vllm(spec: OpenAIFamilySpec) -> VllmOptions:
    return VllmOptions(spec.max_tokens_field or "auto")


def _openai(spec: OpenAIFamilySpec) -> OpenAIOptions:
    return OpenAIOptions(spec.max_tokens_field or "auto")


def engine_url(base_url: str, path: str) -> str:
    """vLLM serves /metrics and /tokenize at the server root, while base_url is usually its
    /v1."""
    parts = urlsplit(base_url)
    root = parts.path.rstrip("/").removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, f"{root}/{path}", "", ""))


def vllm_metrics_url(base_url: str) -> str:
    return engine_url(base_url, "metrics")


def vllm_tokenize_url(base_url: str) -> str:
    return engine_url(base_url, "tokenize")


VLLM = ProviderKind(
    name="vllm", telemetry_name="vllm", options=OpenAIFamilySpec, compile=_vllm,
    count_url=vllm_tokenize_url, count_api="vllm", metrics_url=vllm_metrics_url,
    simulated_api="vllm",
)
OPENAI_COMPAT = ProviderKind(
    name="openai_compat", telemetry_name="openai_compat", options=OpenAIFamilySpec,
    compile=_vllm, simulated_api="vllm",
)
OPENAI = ProviderKind(
    name="openai", telemetry_name="openai", options=OpenAIFamilySpec,
    compile=_openai, encoding=openai_encoding, responses="native",
    reasoning_effort=reasoning_model, simulated_api="openai",
)
