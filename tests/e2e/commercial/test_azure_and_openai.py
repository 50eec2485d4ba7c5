"""openai SDK → gateway → local Azure OpenAI and OpenAI servers: URL layouts, auth headers,
Azure's quirks normalised, and what OpenAI rejects kept out of the body."""

from __future__ import annotations

import httpx
import openai
import orjson
import pytest

from tests.e2e.commercial.conftest import ENV, Rig

HELLO = [{"role": "user", "content": "Say hello to the gateway."}]


@pytest.mark.parametrize("stream", [False, True])
def test_azure_deployment_url_with_api_key(gw: Rig, stream: bool) -> None:
    client = gw.openai()
    if stream:
        chunks = list(client.chat.completions.create(
            model="azure-classic", messages=HELLO, stream=True,
            stream_options={"include_usage": True}))
        # Azure's `choices: []` prompt-filter chunk is gone; the usage chunk is not.
        assert all(c.choices for c in chunks[:-1]) and chunks[-1].usage is not None
        assert all(c.choices[0].delta is not None for c in chunks[:-1])
        assert chunks[0].id and chunks[0].model
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        text = client.chat.completions.create(model="azure-classic", messages=HELLO) \
            .choices[0].message.content or ""
    assert text == "Hello from the mock upstream."
    sent = gw.azure.last()
    assert sent.path == "/openai/deployments/gpt4o/chat/completions"
    assert sent.query == "api-version=2024-10-21"
    assert sent.headers["api-key"] == ENV["TEST_AZURE_KEY"]
    assert "authorization" not in sent.headers


def test_azure_stream_never_shows_a_choice_without_delta(gw: Rig) -> None:
    with httpx.stream("POST", f"{gw.url}/v1/chat/completions", timeout=30,
                      headers={"Authorization": f"Bearer {gw.key}"},
                      json={"model": "azure-classic", "messages": HELLO, "stream": True}) as r:
        events = [e for e in r.read().split(b"\n\n") if e and e != b"data: [DONE]"]
    chunks = [orjson.loads(e.removeprefix(b"data: ")) for e in events]
    assert all(c["choices"] and all("delta" in ch for ch in c["choices"]) for c in chunks)


def test_azure_v1_path_with_an_entra_token(gw: Rig) -> None:
    reply = gw.openai().chat.completions.create(model="azure-v1", messages=HELLO)
    assert reply.choices[0].message.content
    sent = gw.azure.last()
    assert sent.path == "/openai/v1/chat/completions" and sent.query == ""
    assert sent.body["model"] == "gpt4o"
    assert sent.headers["authorization"] == f"Bearer {ENV['TEST_AZURE_TOKEN']}"
    assert "api-key" not in sent.headers


def test_azure_content_filter_is_a_400_the_sdk_understands(gw: Rig) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai().chat.completions.create(
            model="azure-classic", messages=[{"role": "user", "content": "BLOCKME please"}])
    assert info.value.code == "content_filter"
    assert info.value.type == "invalid_request_error"
    assert "violence" in info.value.message and info.value.param == "prompt"


def test_azure_429_with_a_numeric_code_fails_over(gw: Rig) -> None:
    gw.azure.rate_limited = 1
    raw = gw.openai().chat.completions.with_raw_response.create(model="azure-pool",
                                                                messages=HELLO)
    assert raw.headers["x-gateway-backend"] == "azure-v1"
    gw.azure.rate_limited = 1
    with pytest.raises(openai.RateLimitError) as info:
        gw.openai().chat.completions.create(model="azure-classic", messages=HELLO)
    assert info.value.code == "rate_limit_exceeded"


def test_azure_unknown_deployment_is_the_gateways_misconfiguration(gw: Rig) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        gw.openai().chat.completions.create(model="azure-nodeploy", messages=HELLO)
    assert info.value.code == "upstream_misconfigured"
    assert "DeploymentNotFound" not in (info.value.code or "")


@pytest.mark.parametrize("backend", ["gpt-o3", "azure-o3"])
def test_reasoning_models_get_max_completion_tokens(gw: Rig, backend: str) -> None:
    reply = gw.openai().chat.completions.create(model=backend, messages=HELLO, max_tokens=3)
    assert reply.choices[0].finish_reason == "length"
    mock = gw.gpt if backend.startswith("gpt") else gw.azure
    body = mock.last().body
    assert body["max_completion_tokens"] == 3 and "max_tokens" not in body


def test_other_openai_models_keep_max_tokens(gw: Rig) -> None:
    gw.openai().chat.completions.create(model="gpt", messages=HELLO, max_tokens=3)
    assert gw.gpt.last().body["max_tokens"] == 3


def test_metadata_without_store_is_not_sent_to_openai(gw: Rig) -> None:
    client = gw.openai()
    reply = client.chat.completions.create(model="gpt", messages=HELLO,
                                           metadata={"team": "search"})
    assert reply.choices[0].message.content
    assert "metadata" not in gw.gpt.last().body
    client.chat.completions.create(model="gpt", messages=HELLO, metadata={"team": "search"},
                                   store=True)
    assert gw.gpt.last().body["metadata"] == {"team": "search"}


def test_sdk_headers_and_the_tenant_key_stay_at_the_gateway(gw: Rig) -> None:
    gw.openai().chat.completions.create(model="gpt", messages=HELLO)
    headers = gw.gpt.last().headers
    assert not [h for h in headers if h.startswith("x-stainless")]
    assert headers["authorization"] == f"Bearer {ENV['TEST_OPENAI_KEY']}"
    assert gw.key not in str(headers)


def test_openais_own_400_for_an_unknown_parameter_is_relayed(gw: Rig) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai().chat.completions.create(model="gpt", messages=HELLO,
                                            extra_body={"top_k": 5})
    assert "top_k" in info.value.message
