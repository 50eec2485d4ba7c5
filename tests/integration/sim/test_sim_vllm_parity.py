"""The sim against a real vLLM (GATEWAY_TEST_VLLM_URL): the same metric families, labels and
buckets, the same response keys and streaming shape, the same context-length behaviour. A sim
that drifts from the server it stands in for makes every test built on it lie."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.sim import SimConfig

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def real(vllm_url: str) -> dict[str, Any]:
    """Base URL (no /v1), served model name and context length of the real server."""
    base = vllm_url.removesuffix("/").removesuffix("/v1")
    card = httpx.get(f"{base}/v1/models", timeout=10).json()["data"][0]
    return {"url": base, "model": card["id"], "max_model_len": card["max_model_len"]}


@pytest.fixture(scope="module")
def sim(
    real: dict[str, Any], sim_server: Callable[[SimConfig], AbstractContextManager[str]]
) -> Iterator[dict[str, Any]]:
    config = SimConfig(model_name="parity", max_model_len=real["max_model_len"], time_scale=0.02)
    with sim_server(config) as url:
        yield {"url": url, "model": "parity", "max_model_len": real["max_model_len"]}


def families(url: str) -> dict[str, Any]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return {f.name: f for f in text_string_to_metric_families(text)}


def chat(server: dict[str, Any], **fields: Any) -> httpx.Response:
    body = {"model": server["model"], "messages": [{"role": "user", "content": "Hello there"}]}
    return httpx.post(f"{server['url']}/v1/chat/completions", json={**body, **fields}, timeout=60)


def test_every_sim_metric_exists_in_vllm_with_the_same_shape(
    real: dict[str, Any], sim: dict[str, Any]
) -> None:
    theirs, ours = families(real["url"]), families(sim["url"])
    for name, family in ours.items():
        assert name in theirs, f"{name} is not a vLLM metric"
        assert family.type == theirs[name].type, name
        our_labels = {k for s in family.samples for k in s.labels}
        their_labels = {k for s in theirs[name].samples for k in s.labels}
        if name == "vllm:cache_config_info":
            assert our_labels <= their_labels  # the router-relevant subset
        else:
            assert our_labels == their_labels, name
        our_le = [s.labels["le"] for s in family.samples if s.name.endswith("_bucket")]
        their_le = [s.labels["le"] for s in theirs[name].samples if s.name.endswith("_bucket")]
        assert our_le == their_le, name


def test_chat_response_keys_are_vllms(real: dict[str, Any], sim: dict[str, Any]) -> None:
    theirs = chat(real, max_tokens=3).json()
    ours = chat(sim, max_tokens=3).json()
    assert set(ours) <= set(theirs)
    assert set(ours["choices"][0]) <= set(theirs["choices"][0])
    assert set(ours["choices"][0]["message"]) == set(theirs["choices"][0]["message"])
    assert set(ours["usage"]) == set(theirs["usage"])
    assert ours["choices"][0]["finish_reason"] == theirs["choices"][0]["finish_reason"] == "length"


def test_stream_shape_is_vllms(real: dict[str, Any], sim: dict[str, Any]) -> None:
    def events(server: dict[str, Any]) -> list[str]:
        fields = {"max_tokens": 4, "stream": True, "stream_options": {"include_usage": True}}
        text = chat(server, ignore_eos=True, **fields).text
        return [line for line in text.split("\n\n") if line]

    for stream in (events(real), events(sim)):
        assert all(e.startswith("data: ") for e in stream) and stream[-1] == "data: [DONE]"
        chunks = [json.loads(e.removeprefix("data: ")) for e in stream[:-1]]
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
        tokens = chunks[1:-1]
        assert len(tokens) == 4  # one chunk per token
        assert [c["choices"][0]["finish_reason"] for c in tokens] == [None, None, None, "length"]
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4


def test_context_errors_are_vllms(real: dict[str, Any], sim: dict[str, Any]) -> None:
    for server in (real, sim):
        too_many = chat(server, max_tokens=server["max_model_len"] + 1)
        assert too_many.status_code == 400
        error = too_many.json()["error"]
        assert error["type"] == "BadRequestError" and error["code"] == 400
        assert error["param"] == "max_tokens" and "cannot be greater than" in error["message"]
        unknown = chat({**server, "model": "no-such-model"}, max_tokens=1)
        assert unknown.status_code == 404
        assert unknown.json()["error"]["param"] == "model"
