"""OpenAI's x-ratelimit-* headers on every admitted response: the tenant's own limits, or the
documented stand-in where it has none."""

from __future__ import annotations

from gateway.budget.limits import RateState
from gateway.routing.budgeting import UNLIMITED, rate_headers

NAMES = {f"x-ratelimit-{what}-{unit}" for what in ("limit", "remaining", "reset")
         for unit in ("requests", "tokens")}


def test_a_tenant_without_limits_gets_every_header_with_the_stand_in() -> None:
    headers = rate_headers(None)
    assert set(headers) == NAMES
    assert headers["x-ratelimit-limit-requests"] == str(UNLIMITED) == "2147483647"
    assert headers["x-ratelimit-remaining-tokens"] == str(UNLIMITED)
    assert headers["x-ratelimit-reset-requests"] == headers["x-ratelimit-reset-tokens"] == "0s"


def test_a_limit_on_requests_only_reports_it_and_the_stand_in_for_tokens() -> None:
    headers = rate_headers(RateState(limit_requests=60, remaining_requests=59,
                                     reset_requests_s=1.0))
    assert set(headers) == NAMES
    assert (headers["x-ratelimit-limit-requests"], headers["x-ratelimit-remaining-requests"],
            headers["x-ratelimit-reset-requests"]) == ("60", "59", "1s")
    assert headers["x-ratelimit-limit-tokens"] == str(UNLIMITED)


def test_remaining_never_goes_negative() -> None:
    headers = rate_headers(RateState(limit_tokens=1000, remaining_tokens=-40,
                                     reset_tokens_s=0.25))
    assert headers["x-ratelimit-remaining-tokens"] == "0"
    assert headers["x-ratelimit-reset-tokens"] == "250ms"
