"""Readiness's telemetry check: stale or missing engine metrics degrade, never fail."""

from __future__ import annotations

from dataclasses import replace

from gateway.api.health import (
    AUDIT_MIN_FREE_BYTES,
    audit_check,
    check_level,
    redis_down,
    telemetry_check,
)
from gateway.policy.loader import parse_policy
from gateway.policy.tenants import BudgetStoreFailure, TenantPolicy

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


def test_redis_down_keeps_readiness_while_a_tenant_fails_open() -> None:
    policy = parse_policy(
        "version: 1\nbackends:\n  - name: a\n    provider: vllm\n"
        "    base_url: http://127.0.0.1:9001/v1\n    model: m\n    context_window: 1024\n"
        "models:\n  auto: [a]\ntenants:\n"
        "  shut:\n    on_budget_store_error: fail_closed\n"
        "  open-co:\n    on_budget_store_error: fail_open\n")
    verdict = redis_down("ConnectionError", policy)
    assert verdict.startswith("degraded: unreachable (ConnectionError)")
    assert "open-co" in verdict and "shut" not in verdict
    assert check_level(verdict) == 0


def test_redis_down_is_an_error_only_when_every_tenant_fails_closed() -> None:
    policy = replace(POLICY, default_tenant=TenantPolicy(
        on_budget_store_error=BudgetStoreFailure.FAIL_CLOSED))
    verdict = redis_down("TimeoutError", policy)
    assert verdict.startswith("error") and check_level(verdict) == -1
    assert check_level("ok (3 backends)") == 1


class IdleWriter:
    """An audit writer with nothing wrong but the disk under it (what readiness reads)."""

    problem = None
    backlog = 0

    def __init__(self, free_bytes: int | None) -> None:
        self.free_bytes = free_bytes

    def numbers(self) -> dict[str, int]:
        return {"spool_rows": 0}

    def disk_free_bytes(self) -> int | None:
        return self.free_bytes


def test_a_full_spool_volume_fails_readiness_while_idle_and_passes_once_it_has_room() -> None:
    full = IdleWriter(4096)
    verdict = audit_check(full)  # type: ignore[arg-type]
    assert verdict.startswith("error") and "full" in verdict
    assert audit_check(full) == verdict  # asked again with nothing written: the same answer
    assert audit_check(IdleWriter(AUDIT_MIN_FREE_BYTES * 4)) == "ok"  # type: ignore[arg-type]
    assert audit_check(IdleWriter(None)) == "ok"  # type: ignore[arg-type]
