"""The azure kind: Azure OpenAI, by deployment URL (`deployment` with `api_version`) or its v1
API (base_url ending in /openai/v1), its key in `api-key` unless `auth: bearer`."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field

from gateway.provider_kinds.kind import ProviderKind, UpstreamLimits
from gateway.provider_kinds.openai_family import (
    OpenAIFamilySpec,
    openai_encoding,
    reasoning_model,
)
from gateway.providers.azure import API_KEY_HEADER, AzureDialect
from gateway.providers.openai_compat import OpenAICompatProvider
from gateway.types.provider_options import AzureOptions


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


def _provider(limits: UpstreamLimits) -> OpenAICompatProvider:
    return OpenAICompatProvider(connect_timeout_s=limits.connect_timeout_s,
                                read_timeout_s=limits.read_timeout_s,
                                max_connections=limits.max_connections, dialect=AzureDialect())


AZURE = ProviderKind(
    name="azure", telemetry_name="azure.ai.openai", factory=_provider, options=AzureSpec,
    compile=_compile, check=_check, encoding=openai_encoding,
    api_key_header=API_KEY_HEADER, responses="native", reasoning_effort=reasoning_model,
)
