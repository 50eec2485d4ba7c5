"""Errors a client can act on, and failover before the first byte."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import ADMIN_KEY, HELLO_BODY, MAX_BODY, Gateway, create_key
from tests.support.audit_mirror import mirror_rows

HELLO = HELLO_BODY["messages"]


def post(gw: Gateway, body: bytes | dict[str, object], key: str | None = None,
         path: str = "/v1/chat/completions", **headers: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {key or gw.key}"} if key != "" else {}
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return httpx.post(f"{gw.url}{path}", content=content, timeout=30,
                      headers={**auth, "Content-Type": "application/json", **headers})


def assert_openai_error(resp: httpx.Response, status: int) -> dict[str, object]:
    assert resp.status_code == status, resp.text
    assert resp.headers["x-request-id"].startswith("req_")
    error = resp.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] is None or isinstance(error["code"], str)
    return error


def test_malformed_and_incomplete_bodies_are_400(gw: Gateway) -> None:
    assert_openai_error(post(gw, b"{not json"), 400)
    error = assert_openai_error(post(gw, {"model": "auto"}), 400)
    assert error["param"] == "messages"
    error = assert_openai_error(post(gw, {"messages": HELLO}), 400)
    assert error["param"] == "model"


def test_oversized_body_is_413(gw: Gateway) -> None:
    big = {"model": "auto", "messages": [{"role": "user", "content": "x" * (MAX_BODY + 10)}]}
    assert_openai_error(post(gw, big), 413)


def test_unknown_model_is_404_for_the_sdk(gw: Gateway) -> None:
    with pytest.raises(openai.NotFoundError) as info:
        gw.client().chat.completions.create(model="gpt-nonexistent", messages=HELLO)
    assert info.value.code == "model_not_found"
    assert info.value.request_id and info.value.request_id.startswith("req_")


def test_keys_401_and_disabled_tenant_403(gw: Gateway) -> None:
    assert_openai_error(post(gw, {**HELLO_BODY, "model": "auto"}, key=""), 401)
    error = assert_openai_error(post(gw, {**HELLO_BODY, "model": "auto"}, key="sk-gw-wrong"), 401)
    assert error["code"] == "invalid_api_key"
    with openai.OpenAI(base_url=f"{gw.url}/v1", api_key="nope", max_retries=0) as stranger, \
            pytest.raises(openai.AuthenticationError):
        stranger.models.list()

    other = create_key(gw.db_url, "soon-disabled")
    assert post(gw, {**HELLO_BODY, "model": "auto", "max_tokens": 2}, key=other).status_code == 200
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    resp = httpx.post(f"{gw.url}/admin/tenants/soon-disabled/disable", headers=admin)
    assert resp.status_code == 200
    error = assert_openai_error(post(gw, {**HELLO_BODY, "model": "auto"}, key=other), 403)
    assert error["code"] == "tenant_disabled"


def test_admin_api_needs_the_admin_key_and_manages_tenants_and_keys(gw: Gateway) -> None:
    assert_openai_error(httpx.get(f"{gw.url}/admin/tenants"), 401)
    assert_openai_error(httpx.get(f"{gw.url}/admin/tenants",
                                  headers={"Authorization": f"Bearer {gw.key}"}), 401)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    assert httpx.post(f"{gw.url}/admin/tenants", json={"name": "beta"},
                      headers=admin).status_code == 201
    assert_openai_error(httpx.post(f"{gw.url}/admin/tenants", json={"name": "beta"},
                                   headers=admin), 409)
    assert_openai_error(httpx.post(f"{gw.url}/admin/tenants", json={"name": "bad name!"},
                                   headers=admin), 400)
    created = httpx.post(f"{gw.url}/admin/tenants/beta/keys", json={"name": "ci"},
                         headers=admin).json()
    key = created["key"]
    assert post(gw, {**HELLO_BODY, "model": "auto", "max_tokens": 2}, key=key).status_code == 200
    listed = httpx.get(f"{gw.url}/admin/keys", params={"tenant": "beta"}, headers=admin).json()
    assert [k["prefix"] for k in listed] == [created["prefix"]] and listed[0]["key"] is None
    assert httpx.post(f"{gw.url}/admin/keys/{created['id']}/revoke",
                      headers=admin).status_code == 200
    assert_openai_error(post(gw, {**HELLO_BODY, "model": "auto"}, key=key), 401)


def test_unknown_routes_and_methods_are_openai_shaped(gw: Gateway) -> None:
    assert_openai_error(httpx.get(f"{gw.url}/v1/nope"), 404)
    assert_openai_error(httpx.get(f"{gw.url}/v1/chat/completions"), 405)


def test_upstream_400_is_passed_on_normalised(gw: Gateway) -> None:
    # The sim's real limit (1024) is below what the policy claims (8192): the backend's own
    # context-length error reaches the client as an OpenAI error with a string code.
    body = {"model": "only-b", "messages": [{"role": "user", "content": "word " * 1500}]}
    error = assert_openai_error(post(gw, body), 400)
    assert error["code"] == "context_length_exceeded"
    assert error["type"] == "invalid_request_error"
    assert "maximum context length" in str(error["message"])


def test_refused_connection_fails_over_to_the_next_candidate(gw: Gateway) -> None:
    raw = gw.client().chat.completions.with_raw_response.create(
        model="failover", messages=HELLO, max_tokens=2)
    assert raw.headers["x-gateway-backend"] == "sim-a"
    assert raw.headers["x-gateway-attempts"] == "2"


@pytest.mark.parametrize("stream", [False, True])
def test_upstream_5xx_fails_over_before_the_first_byte(gw: Gateway, stream: bool) -> None:
    gw.sim("sim-b").post("/sim/faults", json={"status": 503, "count": 1})
    kwargs: dict[str, object] = {"stream": True} if stream else {}
    raw = gw.client().chat.completions.with_raw_response.create(
        model="flaky", messages=HELLO, max_tokens=3, **kwargs)
    assert raw.headers["x-gateway-backend"] == "sim-a"
    assert raw.headers["x-gateway-attempts"] == "2"
    # The audit row says why the first candidate was passed over.
    row = recorded(gw, raw.headers["x-request-id"])
    assert row["tried"] == ["sim-b", "sim-a"]
    assert row["failures"] == ["sim-b: HTTP 503"]  # never the upstream's message text


def test_upstream_timeout_fails_over(gw: Gateway) -> None:
    gw.sim("sim-b").post("/sim/faults", json={"delay_s": 3.0, "count": 1})
    started = time.perf_counter()
    raw = gw.client().chat.completions.with_raw_response.create(
        model="flaky", messages=HELLO, max_tokens=2)
    assert raw.headers["x-gateway-backend"] == "sim-a"
    assert time.perf_counter() - started < 3.0  # the 2 s read timeout, not the 3 s delay
    [why] = recorded(gw, raw.headers["x-request-id"])["failures"]
    assert why.startswith("sim-b: ") and why.endswith("TimeoutError")  # the read timed out


def test_when_every_candidate_fails_the_client_gets_a_5xx_it_may_retry(gw: Gateway) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        gw.client().chat.completions.create(model="all-dead", messages=HELLO)
    assert info.value.status_code == 502
    assert info.value.code == "upstream_unavailable"


def test_mid_stream_failure_reaches_the_sdk_as_an_error(gw: Gateway) -> None:
    gw.sim("sim-b").post("/sim/faults", json={"abort_stream_after_tokens": 3, "count": 1})
    stream = gw.client().chat.completions.create(
        model="only-b", messages=HELLO, max_tokens=30, stream=True, extra_body={"ignore_eos": True})
    received = []
    with pytest.raises(openai.APIError) as info:
        for chunk in stream:
            received.append(chunk)
    assert received, "the chunks before the failure were relayed"
    assert "stream broke" in info.value.message or "sim-b" in info.value.message


def _aborted(gw: Gateway, sim: str) -> float:
    text = gw.sim(sim).get("/metrics").text
    for family in text_string_to_metric_families(text):
        if family.name == "vllm:request_success":
            return sum(s.value for s in family.samples
                       if s.name.endswith("_total") and s.labels["finished_reason"] == "abort")
    return 0.0


@pytest.mark.parametrize("stream", [True, False])
def test_client_disconnect_cancels_the_upstream_request(gw: Gateway, stream: bool) -> None:
    before = _aborted(gw, "sim-b")
    body = {**HELLO_BODY, "model": "only-b", "max_tokens": 900, "ignore_eos": True,
            "stream": stream}
    if stream:
        with httpx.stream("POST", f"{gw.url}/v1/chat/completions", json=body, timeout=30,
                          headers={"Authorization": f"Bearer {gw.key}"}) as resp:
            next(resp.iter_raw())  # the stream is flowing; now hang up
    else:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{gw.url}/v1/chat/completions", json=body, timeout=0.3,
                       headers={"Authorization": f"Bearer {gw.key}"})
    deadline = time.monotonic() + 5
    while _aborted(gw, "sim-b") <= before:
        assert time.monotonic() < deadline, "the backend never saw the request aborted"
        time.sleep(0.05)


def test_every_request_is_recorded_without_its_content(gw: Gateway) -> None:
    secret = "Please mail my results to carla.moss@gmail.com, thanks."
    raw = gw.client().chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": secret}], max_tokens=2)
    row = recorded(gw, raw.headers["x-request-id"])
    assert row["outcome"] == "ok" and row["status"] == 200
    assert row["backend"] == raw.headers["x-gateway-backend"]
    assert row["completion_tokens"] > 0 and row["cost_micro_usd"] > 0
    # the whole log, not one line: no prompt text and no detected value is ever written
    text = gw.audit_path.read_text()
    assert "carla.moss" not in text and "Please mail my results" not in text


def recorded(gw: Gateway, request_id: str) -> dict[str, Any]:
    """The request's audit row, once the mirror has it."""
    deadline = time.monotonic() + 5
    while True:
        match = [r for r in mirror_rows(gw.audit_path) if r["request_id"] == request_id]
        if match:
            return match[0]
        assert time.monotonic() < deadline, f"no audit row for {request_id}"
        time.sleep(0.05)
