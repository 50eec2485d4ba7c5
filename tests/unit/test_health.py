"""Readiness's telemetry check: stale or missing engine metrics degrade, never fail."""

from __future__ import annotations

from gateway.api.health import telemetry_check
from gateway.policy.loader import parse_policy

POLICY = parse_policy(
    "version: 1\nbackends:\n"
    + "".join(
        f"  - name: {name}\n    provider: vllm\n    base_url: http://127.0.0.1:{port}/v1\n"
        "    model: m\n    context_window: 1024\n"
        for name, port in (("a", 9001), ("b", 9002))
    )
    + "models:\n  auto: [a, b]\ntelemetry: {stale_after_s: 5}\n"
)


def test_fresh_metrics_from_every_scraped_engine_are_ok() -> None:
    details: dict[str, dict[str, object]] = {"a": {"scrape_age_s": 0.4}, "b": {"scrape_age_s": 4.9}}
    assert telemetry_check(details, POLICY) == "ok"


def test_stale_and_never_scraped_engines_are_named_as_degraded() -> None:
    details: dict[str, dict[str, object]] = {
        "a": {"scrape_age_s": 12.0}, "b": {"scrape_age_s": None}}
    result = telemetry_check(details, POLICY)
    assert result.startswith("degraded")  # reported, yet not "error": the gateway stays ready
    assert "a (12.0 s old)" in result and "b (never scraped)" in result
