"""Every policy under policies/ validates, routes a set of sample requests, and never sends a
sensitive request outside the self_hosted zone without redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import GatewayError
from gateway.policy.engine import decide
from gateway.policy.loader import load_policy
from gateway.types import (
    Complexity,
    Endpoint,
    FleetSnapshot,
    Profile,
    RouteRequest,
    SensitiveSpan,
    TenantContext,
)

ROOT = Path(__file__).resolve().parents[2] / "policies"
POLICIES = sorted([*ROOT.glob("*.yaml"), *ROOT.glob("examples/*.yaml")])


def samples() -> list[tuple[str, Profile, tuple[str, ...]]]:
    def prof(tokens: int, label: str, categories: tuple[str, ...] = ()) -> Profile:
        spans = tuple(SensitiveSpan("x", c, 0, 1, 0.9) for c in categories)
        return Profile(tokens, 256, Complexity(0.5, label), categories, spans)

    return [
        ("simple", prof(40, "low"), ()),
        ("hard", prof(900, "high"), ()),
        ("long", prof(20_000, "medium"), ()),
        ("batch", prof(2_000, "low"), ("batch",)),
        ("pii", prof(60, "low", ("pii",)), ()),
        ("secret", prof(60, "high", ("secret",)), ()),
        ("phi", prof(3_000, "medium", ("phi",)), ()),
    ]


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_policy_routes_samples_and_keeps_sensitive_data_home(path: Path) -> None:
    policy = load_policy(path)
    routed = 0
    for model in policy.public_models():
        for tenant_name in ("acme", "legal", "support"):
            tenant = TenantContext("t", tenant_name, "k")
            for _, profile, tags in samples():
                request = RouteRequest("r", Endpoint.CHAT, model, {}, tags=tags)
                try:
                    decision = decide(request, profile, tenant, FleetSnapshot(), policy)
                except GatewayError as exc:
                    assert exc.status in (400, 403, 404, 503), exc
                    continue
                routed += 1
                assert decision.rule
                if profile.sensitivity and not decision.redact:
                    zones = {b.zone for b in decision.candidates}
                    assert zones == {"self_hosted"}, (path.name, model, profile.sensitivity,
                                                      decision.rule)
    assert routed > 0
