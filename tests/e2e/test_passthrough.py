"""Bodies reach the backend faithfully; gateway and SDK internals do not; SSE is exact."""

from __future__ import annotations

import time

import httpx
import orjson

from tests.e2e.conftest import HELLO_BODY, Gateway


def test_unknown_fields_pass_through_untouched(gw: Gateway) -> None:
    extra = {"top_k": 7, "min_p": 0.1, "repetition_penalty": 1.05,
             "chat_template_kwargs": {"enable_thinking": False}}
    raw = gw.client().chat.completions.with_raw_response.create(
        model="only-b", messages=[{"role": "user", "content": "hi", "name": "ann"}],
        max_tokens=3, temperature=0.3, seed=11, logit_bias={"42": -100}, user="u-1",
        stop=["\n\n"], extra_body=extra)
    seen = gw.recorded(raw.headers["x-request-id"])
    body = seen["body"]
    assert isinstance(body, dict)
    sent = {"messages": [{"role": "user", "content": "hi", "name": "ann"}], "max_tokens": 3,
            "temperature": 0.3, "seed": 11, "logit_bias": {"42": -100}, "user": "u-1",
            "stop": ["\n\n"], **extra}
    assert body == {"model": "sim-model", **sent}  # only the model name is the backend's


def test_sdk_and_client_credentials_are_not_forwarded(gw: Gateway) -> None:
    raw = gw.client().chat.completions.with_raw_response.create(
        model="only-b", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
    headers = gw.recorded(raw.headers["x-request-id"])["headers"]
    assert isinstance(headers, dict)
    assert not [h for h in headers if h.startswith("x-stainless")]
    assert "authorization" not in headers  # the tenant key stays at the gateway
    assert headers["content-type"] == "application/json"


def test_stream_asks_upstream_for_usage_but_keeps_the_clients_other_options(gw: Gateway) -> None:
    with httpx.stream("POST", f"{gw.url}/v1/chat/completions", headers=_auth(gw), json={
        **HELLO_BODY, "model": "only-b", "stream": True, "max_tokens": 3,
        "stream_options": {"continuous_usage_stats": False}}) as resp:
        request_id = resp.headers["x-request-id"]
        resp.read()
    body = gw.recorded(request_id)["body"]
    assert isinstance(body, dict)
    assert body["stream_options"] == {"continuous_usage_stats": False, "include_usage": True}


def test_sse_framing_is_exact_and_chunks_are_not_buffered(gw: Gateway) -> None:
    # ~40 decode steps of 10 ms × time_scale: chunks must arrive spread out, not all at once.
    arrivals: list[float] = []
    raw = b""
    with httpx.stream("POST", f"{gw.url}/v1/chat/completions", headers=_auth(gw), json={
        **HELLO_BODY, "model": "only-b", "stream": True, "max_tokens": 40,
        "ignore_eos": True}, timeout=30) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        for part in resp.iter_raw():
            arrivals.append(time.perf_counter())
            raw += part
    events = raw.split(b"\n\n")
    assert events[-1] == b"" and events[-2] == b"data: [DONE]"
    for event in events[:-2]:
        assert event.startswith(b"data: {") and b"\n" not in event
        assert "choices" in orjson.loads(event[6:])
    assert len(arrivals) > 5
    assert arrivals[-1] - arrivals[0] > 0.01


def _auth(gw: Gateway) -> dict[str, str]:
    return {"Authorization": f"Bearer {gw.key}"}
