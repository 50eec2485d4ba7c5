"""Budgets, rate limits and cost reporting through the official openai SDK, on the embedded
(in-process) budget store; the Redis store passes the same contract suite."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.e2e.conftest import ADMIN_KEY, Gateway, create_key

HELLO = [{"role": "user", "content": "Say hello to the budget."}]
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def put_limits(gw: Gateway, scope: str, body: dict[str, object]) -> None:
    resp = httpx.put(f"{gw.url}/admin/tenants/acme/limits/{scope}", json=body, headers=ADMIN)
    assert resp.status_code == 200, resp.text


@pytest.fixture
def limited(gw: Gateway) -> Iterator[Gateway]:
    yield gw
    for scope in ("tenant", "tag:batch"):
        httpx.delete(f"{gw.url}/admin/tenants/acme/limits/{scope}", headers=ADMIN)


def usage(gw: Gateway, key: str | None = None) -> dict[str, object]:
    resp = httpx.get(f"{gw.url}/v1/usage", headers={"authorization": f"Bearer {key or gw.key}"})
    assert resp.status_code == 200, resp.text
    return resp.json()


def tenant_scope(report: dict[str, object]) -> dict[str, object]:
    scopes = report["scopes"]
    assert isinstance(scopes, list)
    return next(s for s in scopes if s["scope"] == "tenant")


def test_each_response_says_what_it_cost_and_usage_adds_up(gw: Gateway) -> None:
    before = float(tenant_scope(usage(gw))["spent_today_usd"])  # type: ignore[arg-type]
    raw = gw.client().chat.completions.with_raw_response.create(
        model="auto", messages=HELLO, max_tokens=5)
    cost = float(raw.headers["x-gateway-cost-usd"])
    assert cost > 0
    chunks = list(gw.client().chat.completions.create(
        model="auto", messages=HELLO, max_tokens=5, stream=True,
        stream_options={"include_usage": True}))
    final = chunks[-1]
    assert final.choices == [] and final.usage is not None
    extra = final.model_extra or {}
    stream_cost = float(extra["x_gateway"]["cost_usd"])
    usage_ = final.usage
    assert stream_cost == pytest.approx((usage_.prompt_tokens + 2 * usage_.completion_tokens) / 1e6)
    after = tenant_scope(usage(gw))
    assert float(after["spent_today_usd"]) == pytest.approx(before + cost + stream_cost, abs=2e-6)
    assert after["reserved_usd"] == "0.000000" and after["in_flight"] == 0


def test_a_hard_budget_stops_requests_with_insufficient_quota_and_no_retry(
    limited: Gateway,
) -> None:
    gw = limited
    spent = float(tenant_scope(usage(gw))["spent_today_usd"])  # type: ignore[arg-type]
    # Room for one request: its worst case is ~21 µUSD (prompt at the self-hosted margin).
    put_limits(gw, "tenant", {"budget": {"daily_usd": spent + 0.00003}})
    served = 0
    with openai.OpenAI(base_url=f"{gw.url}/v1", api_key=gw.key, max_retries=3) as client, \
            pytest.raises(openai.RateLimitError) as info:
        for _ in range(50):
            client.chat.completions.create(model="auto", messages=HELLO, max_tokens=2)
            served += 1
    assert served >= 1
    error = info.value
    assert error.code == "insufficient_quota" and error.type == "insufficient_quota"
    assert error.response.headers["x-should-retry"] == "false"  # the SDK gave up at once
    report = tenant_scope(usage(gw))
    assert report["remaining"]["daily_usd"] is not None
    # Once spend reached the cap, nothing more is admitted, not even a tiny request.
    with pytest.raises(openai.RateLimitError):
        gw.client().chat.completions.create(model="auto", messages=HELLO, max_tokens=1)


def test_a_refusal_says_what_was_reserved_and_what_would_fit(limited: Gateway) -> None:
    gw = limited
    spent = float(tenant_scope(usage(gw))["spent_today_usd"])  # type: ignore[arg-type]
    # 60 µUSD of room: max_tokens 200 reserves ~400 µUSD of output at the dearest price.
    put_limits(gw, "tenant", {"budget": {"daily_usd": round(spent + 0.00006, 6)}})
    with pytest.raises(openai.RateLimitError) as info:
        gw.client().chat.completions.create(model="auto", messages=HELLO, max_tokens=200)
    error = info.value
    assert error.code == "insufficient_quota" and error.type == "insufficient_quota"
    message = error.body["message"]  # type: ignore[index]
    assert message.startswith("You exceeded the daily spend budget of your organization.")
    assert f"Limit ${spent + 0.00006:.6f}; spent ${spent:.6f};" in message
    assert "This request reserved $" in message and "max_tokens 200 at the price of" in message
    fits = int(message.split("max_tokens up to ")[1].split()[0])
    assert 0 < fits < 200
    # The request the message describes is admitted.
    gw.client().chat.completions.create(model="auto", messages=HELLO, max_tokens=fits)


def test_rate_limits_use_openai_headers_and_retry_after(limited: Gateway) -> None:
    gw = limited
    put_limits(gw, "tag:batch", {"limits": {"rpm": 2}})
    client = gw.client(default_headers={"x-gateway-tags": "batch"})
    first = client.chat.completions.with_raw_response.create(
        model="auto", messages=HELLO, max_tokens=2)
    assert first.headers["x-ratelimit-limit-requests"] == "2"
    assert first.headers["x-ratelimit-remaining-requests"] == "1"
    assert first.headers["x-ratelimit-reset-requests"].endswith(("s", "ms"))
    client.chat.completions.create(model="auto", messages=HELLO, max_tokens=2)
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="auto", messages=HELLO, max_tokens=2)
    assert info.value.code == "rate_limit_exceeded"
    assert int(info.value.response.headers["retry-after"]) >= 1
    assert "x-should-retry" not in info.value.response.headers
    # Other traffic of the tenant (no tag) is not limited by the tag's bucket.
    gw.client().chat.completions.create(model="auto", messages=HELLO, max_tokens=2)


def test_a_key_reads_its_own_tenant_usage_only_and_admin_needs_the_admin_key(
    gw: Gateway,
) -> None:
    other_key = create_key(gw.db_url, "globex")
    gw.client().chat.completions.create(model="auto", messages=HELLO, max_tokens=2)
    mine, theirs = usage(gw), usage(gw, other_key)
    assert mine["tenant"] == "acme" and theirs["tenant"] == "globex"
    assert float(tenant_scope(theirs)["spent_today_usd"]) == 0.0  # type: ignore[arg-type]
    assert float(tenant_scope(mine)["spent_today_usd"]) > 0  # type: ignore[arg-type]
    for headers in ({"authorization": f"Bearer {gw.key}"}, {}):
        resp = httpx.get(f"{gw.url}/admin/tenants/acme/usage", headers=headers)
        assert resp.status_code in (401, 403) and "error" in resp.json()
    admin = httpx.get(f"{gw.url}/admin/tenants/acme/usage", headers=ADMIN).json()
    assert tenant_scope(admin)["spent_today_usd"] == tenant_scope(mine)["spent_today_usd"]
    bad = httpx.put(f"{gw.url}/admin/tenants/acme/limits/everyone", json={}, headers=ADMIN)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "scope"
