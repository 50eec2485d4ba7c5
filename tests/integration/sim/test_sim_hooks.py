"""The sim-only test hooks over real HTTP: request recording, injected status codes, delays,
dropped streams, and aborts when a client disconnects."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import openai
import pytest
from openai import OpenAI

MODEL = "sim-test"
HELLO = [{"role": "user", "content": "Hello there"}]


@pytest.fixture
def hooks(sim_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim_url, timeout=10) as http:
        http.delete("/sim/faults")
        http.delete("/sim/requests")
        yield http
        http.delete("/sim/faults")


def sdk(sim_url: str, retries: int = 0) -> OpenAI:
    return OpenAI(base_url=f"{sim_url}/v1", api_key="sk-sim", max_retries=retries)


def wait_until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_requests_are_recorded_with_body_and_headers(sim_url: str, hooks: httpx.Client) -> None:
    with sdk(sim_url) as client:
        client.chat.completions.create(
            model=MODEL,
            messages=HELLO,
            max_tokens=3,
            extra_body={"top_k": 5, "chat_template_kwargs": {"mode": "x"}},
            extra_headers={"x-tenant": "acme"},
        )
    hooks.get("/metrics")  # scrapes are not recorded
    (entry,) = hooks.get("/sim/requests").json()["data"]
    assert entry["method"] == "POST" and entry["path"] == "/v1/chat/completions"
    assert entry["body"]["top_k"] == 5 and entry["body"]["chat_template_kwargs"] == {"mode": "x"}
    assert entry["headers"]["x-tenant"] == "acme"
    assert entry["headers"]["authorization"] == "Bearer sk-sim"
    assert entry["headers"]["x-stainless-retry-count"] == "0"  # sent straight by the SDK


def test_status_fault_for_count_requests_then_recovers(sim_url: str, hooks: httpx.Client) -> None:
    assert hooks.post("/sim/faults", json={"status": 503, "count": 2}).status_code == 200
    with sdk(sim_url) as client, pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=2)
    assert info.value.status_code == 503
    assert isinstance(info.value.body, dict) and info.value.body["code"] == 503
    with sdk(sim_url, retries=2) as client:  # one more 503, then the SDK's retry succeeds
        response = client.chat.completions.create(model=MODEL, messages=HELLO, max_tokens=2)
    assert response.choices[0].message.content
    retries = [
        e["headers"]["x-stainless-retry-count"] for e in hooks.get("/sim/requests").json()["data"]
    ]
    assert retries == ["0", "0", "1"]
    assert hooks.get("/sim/faults").json()["status"] is None


def test_delay_fault_holds_the_answer(sim_url: str, hooks: httpx.Client) -> None:
    hooks.post("/sim/faults", json={"delay_s": 0.3, "count": 1})
    started = time.monotonic()
    assert hooks.post("/v1/completions", json={"prompt": "x", "max_tokens": 1}).status_code == 200
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    hooks.post("/v1/completions", json={"prompt": "x", "max_tokens": 1})
    assert time.monotonic() - started < 0.3


def test_stream_is_dropped_after_k_tokens(
    sim_url: str, hooks: httpx.Client, metrics_of: Callable[[str], dict[str, float]]
) -> None:
    aborted_before = metrics_of(sim_url)["vllm:request_success_total{finished_reason=abort}"]
    hooks.post("/sim/faults", json={"abort_stream_after_tokens": 3, "count": 1})
    received: list[str] = []
    # Newer SDKs wrap the dropped connection in APIConnectionError, older ones let it through.
    dropped = (openai.APIConnectionError, httpx.RemoteProtocolError)
    with sdk(sim_url) as client, pytest.raises(dropped):
        stream = client.chat.completions.create(
            model=MODEL, messages=HELLO, stream=True, max_tokens=50, extra_body={"ignore_eos": True}
        )
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert len(received) == 1 + 3  # the role chunk, then exactly three tokens
    wait_until(lambda: hooks.get("/sim/state").json()["running"] == 0)
    after = metrics_of(sim_url)["vllm:request_success_total{finished_reason=abort}"]
    assert after == aborted_before + 1


def test_client_disconnect_aborts_the_request(
    sim_url: str, hooks: httpx.Client, metrics_of: Callable[[str], dict[str, float]]
) -> None:
    aborted_before = metrics_of(sim_url)["vllm:request_success_total{finished_reason=abort}"]
    long_request = {
        "model": MODEL,
        "messages": HELLO,
        "max_tokens": 8000,
        "ignore_eos": True,
    }
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{sim_url}/v1/chat/completions", json=long_request, timeout=0.2)
    wait_until(lambda: hooks.get("/sim/state").json()["running"] == 0)
    after = metrics_of(sim_url)["vllm:request_success_total{finished_reason=abort}"]
    assert after == aborted_before + 1
    assert hooks.get("/sim/state").json()["kv_cache_usage"] == 0.0


def test_bad_fault_spec_is_a_400(hooks: httpx.Client) -> None:
    response = hooks.post("/sim/faults", json={"status": 503, "colour": "red"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "BadRequestError"
