"""Azure URLs, quirks and errors; OpenAI body hygiene: pure, no fixtures."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from gateway.providers.azure import AzureStreamNormaliser, azure_error, azure_url
from gateway.providers.openai_hygiene import clean_for_openai, uses_max_completion_tokens
from gateway.types import Backend, Endpoint
from gateway.types.provider_options import AzureOptions


def backend(**fields: Any) -> Backend:
    """An azure backend; its own options (deployment, api_version, max_tokens_field) are
    passed among the shared fields, as the policy writes them."""
    own = {k: fields.pop(k) for k in ("deployment", "api_version", "max_tokens_field")
           if k in fields}
    base = {"name": "b", "provider": "azure", "base_url": "https://r.openai.azure.com",
            "model": "gpt-4o", "zone": "external", "context_window": 1000, "quality_tier": 1}
    return Backend(**{**base, **fields}, options=AzureOptions(**own))


@pytest.mark.parametrize("fields,url", [
    ({"deployment": "dep 1", "api_version": "2024-10-21"},
     "https://r.openai.azure.com/openai/deployments/dep%201/chat/completions"
     "?api-version=2024-10-21"),
    ({"base_url": "https://r.openai.azure.com/openai", "deployment": "d", "api_version": "v"},
     "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=v"),
    ({"base_url": "https://r.openai.azure.com/openai/v1"},
     "https://r.openai.azure.com/openai/v1/chat/completions"),
    ({"base_url": "https://r.openai.azure.com/openai/v1", "api_version": "preview"},
     "https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview"),
])
def test_azure_urls(fields: dict[str, Any], url: str):
    assert azure_url(backend(**fields), Endpoint.CHAT) == url


def chunk(**fields: Any) -> bytes:
    return orjson.dumps({"id": "c", "object": "chat.completion.chunk", **fields})


def test_azure_stream_quirks_are_normalised():
    normalise = AzureStreamNormaliser()
    assert normalise.ready
    assert normalise.feed(chunk(choices=[], prompt_filter_results=[{"prompt_index": 0}])) == []
    usage = chunk(choices=[], usage={"prompt_tokens": 1})
    assert normalise.feed(usage) == [usage]
    normal = chunk(choices=[{"index": 0, "delta": {"content": "x"}}])
    assert normalise.feed(normal) == [normal]
    fixed = orjson.loads(normalise.feed(chunk(choices=[{"index": 0, "finish_reason": None,
                                                        "content_filter_results": {}}]))[0])
    assert fixed["choices"][0]["delta"] == {}
    error = orjson.dumps({"error": {"message": "m"}})
    assert normalise.feed(error) == [error]
    assert normalise.feed(b"not json") == [b"not json"]
    assert normalise.finish() == []


def test_azure_content_filter_error():
    body = orjson.dumps({"error": {
        "message": "The response was filtered", "type": None, "param": "prompt",
        "code": "content_filter", "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
            "hate": {"filtered": False}, "violence": {"filtered": True, "severity": "high"}}}}})
    err, retryable = azure_error(400, body, "az")
    assert not retryable and err.status == 400
    assert err.to_dict()["error"] == {
        "message": "The response was filtered (filtered categories: violence)",
        "type": "invalid_request_error", "param": "prompt", "code": "content_filter"}


@pytest.mark.parametrize("status,code,client_status,client_code,retryable", [
    (429, "429", 429, "rate_limit_exceeded", True),
    (404, "DeploymentNotFound", 502, "upstream_misconfigured", True),
    (401, "401", 502, "upstream_misconfigured", True),
    (500, "500", 502, "upstream_unavailable", True),
    (400, "400", 400, None, False),
])
def test_azure_typeless_errors(status: int, code: str, client_status: int,
                               client_code: str | None, retryable: bool):
    err, may_retry = azure_error(status, orjson.dumps({"error": {"code": code,
                                                                 "message": "m"}}), "az")
    assert (err.status, err.code, may_retry) == (client_status, client_code, retryable)
    assert err.error_type  # always a string type for OpenAI clients


@pytest.mark.parametrize("model,expected", [
    ("o1", True), ("o3-mini", True), ("o4-mini-2025-04-16", True), ("gpt-5", True),
    ("gpt-5-mini", True), ("openai/o3", True), ("gpt-4.1", False), ("gpt-4o", False),
    ("omni-moderation", False),
])
def test_model_families_that_need_max_completion_tokens(model: str, expected: bool):
    assert uses_max_completion_tokens(model) is expected


@pytest.mark.parametrize("model,field,sent,expected", [
    ("o3-mini", "auto", {"max_tokens": 5}, {"max_completion_tokens": 5}),
    ("gpt-4.1", "auto", {"max_tokens": 5}, {"max_tokens": 5}),
    ("gpt-4.1", "max_completion_tokens", {"max_tokens": 5}, {"max_completion_tokens": 5}),
    ("gpt-4.1", "max_tokens", {"max_completion_tokens": 5}, {"max_tokens": 5}),
    ("o3", "auto", {"max_tokens": 5, "max_completion_tokens": 9}, {"max_completion_tokens": 9}),
    ("x", "max_tokens", {"max_tokens": 5, "max_completion_tokens": 9}, {"max_tokens": 9}),
])
def test_max_tokens_field(model: str, field: str, sent: dict[str, Any],
                          expected: dict[str, Any]):
    body = dict(sent)
    clean_for_openai(body, backend(model=model, max_tokens_field=field))
    assert body == expected


def test_metadata_only_with_store():
    body: dict[str, Any] = {"metadata": {"a": "b"}}
    clean_for_openai(body, backend())
    assert body == {}
    body = {"metadata": {"a": "b"}, "store": True}
    clean_for_openai(body, backend())
    assert body == {"metadata": {"a": "b"}, "store": True}
