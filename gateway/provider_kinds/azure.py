"""The azure kind: Azure OpenAI, by deployment URL (`deployment` with `api_version`) or its v1
API (base_url ending in /openai/v1), its key in `api-key` unless `auth: bearer`."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import Field

from gateway.provider_kinds.kind import ProviderKind
from gateway.provider_kinds.openai_family import (
    OpenAIFamilyOptions,
    OpenAIFamilySpec,
    openai_encoding,
    reasoning_model,
)
from gateway.types import Backend


class AzureSpec(OpenAIFamilySpec):
    deployment: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="azure: deployment name for /openai/deployments/{deployment}/... URLs; "
        "omit it for the v1 API (base_url ending in /openai/v1, model = deployment name)",
    )
    api_version: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9._-]{1,40}$",
        description="azure: the api-version query parameter (required with deployment)",
    )


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


def _compile(spec: AzureSpec) -> AzureOptions:
    return AzureOptions(spec.max_tokens_field or "auto", spec.deployment, spec.api_version)


def _check(spec: AzureSpec, base_url: str) -> list[tuple[str | None, str]]:
    path = (urlsplit(base_url).path or "").rstrip("/")
    if spec.deployment and not spec.api_version:
        return [(None, "azure with a deployment needs api_version")]
    if not spec.deployment and not path.endswith("/openai/v1"):
        return [(None, "azure needs a deployment (with api_version), or a base_url ending in "
                 "/openai/v1 for the v1 API")]
    return []


AZURE = ProviderKind(
    name="azure", telemetry_name="azure.ai.openai", options=AzureSpec,
    compile=_compile, check=_check, encoding=openai_encoding,
    api_key_header="api-key", responses="native", reasoning_effort=reasoning_model,
)
