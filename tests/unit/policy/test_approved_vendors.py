"""Approved external vendors: a backend outside self_hosted may carry the sensitivity
categories it is approved for (`approved_for` with an `approval` reference) and only those;
`policy explain` names the approval a route would rely on."""

from __future__ import annotations

import asyncio

import pytest

from gateway.classify.profiler import RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.loader import PolicyError, parse_policy
from gateway.routing.explain import explain, render_table
from gateway.types import Backend, Endpoint, RouteRequest, TenantContext

BACKENDS = """\
version: 1
backends:
  - name: home
    provider: vllm
    base_url: http://127.0.0.1:9/v1
    model: m
    context_window: 8192
  - name: azure-baa
    provider: openai
    base_url: https://example.openai.azure.com/v1
    model: gpt-4o
    context_window: 128000
    zone: external
    quality_tier: 4
    approved_for: [phi]
    approval: BAA-2026-017
"""
PHI_TO_VENDOR = """\
rules:
  - name: health-to-baa
    when: {sensitivity: [phi]}
    backends: [azure-baa]
  - name: other-sensitive-home
    when: {sensitivity: [pii, secret]}
    allow_zones: [self_hosted]
  - name: default
    objective: cheapest
"""
PHI_TEXT = "Patient was diagnosed with type 2 diabetes, ICD-10 E11.9, MRN 4839201."


def problems(text: str) -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(text, "p.yaml")
    return [f"{p.path}: {p.message}" for p in info.value.problems]


def test_routes_to_an_approved_vendor_for_its_category_pass_the_leak_checks() -> None:
    # The first rule catches every phi request and sends it to the vendor approved for phi.
    # It is the first rule for pii and secret too (a request can carry phi and pii at once):
    # those would reach the vendor unapproved.
    found = problems(BACKENDS + PHI_TO_VENDOR)
    assert found == [
        "rules[0]: requests with pii findings can reach azure-baa outside the self_hosted "
        "zone without redaction (restrict allow_zones or set redact: true)",
        "rules[0]: requests with secret findings can reach azure-baa outside the self_hosted "
        "zone without redaction (restrict allow_zones or set redact: true)",
    ]
    # Either approved for what it may receive, or only phi-alone requests reach it (the
    # rule for the other categories first): the policy validates.
    approved = BACKENDS.replace("approved_for: [phi]", "approved_for: [phi, pii, secret]")
    policy = parse_policy(approved + PHI_TO_VENDOR, "p.yaml")
    assert policy.backends["azure-baa"].approved_for == frozenset({"phi", "pii", "secret"})
    assert policy.backends["azure-baa"].approval == "BAA-2026-017"
    rules = PHI_TO_VENDOR.split("  - name: ")
    reordered = "  - name: ".join([rules[0], rules[2], rules[1], rules[3]])
    assert parse_policy(BACKENDS + reordered, "p.yaml").backends["azure-baa"].approval


def test_without_the_approval_the_same_route_is_a_leak() -> None:
    plain = BACKENDS.replace("    approved_for: [phi]\n    approval: BAA-2026-017\n", "")
    found = problems(plain + PHI_TO_VENDOR)
    assert ("rules[0]: requests with phi findings can reach azure-baa outside the "
            "self_hosted zone without redaction (restrict allow_zones or set redact: true)"
            in found)


@pytest.mark.parametrize(("change", "says"), [
    ("    approval: BAA-2026-017\n", "approved_for and approval go together"),
    ("    approved_for: [phi]\n", "approved_for and approval go together"),
])
def test_approved_for_and_approval_go_together(change: str, says: str) -> None:
    text = BACKENDS.replace(change, "") + PHI_TO_VENDOR
    assert any(says in problem for problem in problems(text))


def test_an_approval_is_for_backends_outside_self_hosted() -> None:
    text = BACKENDS.replace("    zone: external\n", "") + PHI_TO_VENDOR
    assert any("approved_for is for backends outside self_hosted" in p
               for p in problems(text))


def test_approval_used_needs_every_category_approved_and_no_redaction() -> None:
    vendor = Backend("v", "openai", "https://x", "m", "external", 1000, 4,
                     approved_for=frozenset({"phi"}), approval="BAA-1")
    assert vendor.approval_used(("phi",), redacted=False) == "BAA-1"
    assert vendor.approval_used(("phi", "pii"), redacted=False) is None
    assert vendor.approval_used(("phi",), redacted=True) is None  # nothing left unredacted
    assert vendor.approval_used((), redacted=False) is None
    home = Backend("h", "vllm", "http://x", "m", "self_hosted", 1000, 1,
                   approved_for=frozenset({"phi"}), approval="BAA-1")
    assert home.approval_used(("phi",), redacted=False) is None


def test_explain_names_the_approval_a_route_relies_on() -> None:
    approved = BACKENDS.replace("approved_for: [phi]", "approved_for: [phi, pii, secret]")
    policy = parse_policy(approved + PHI_TO_VENDOR, "p.yaml")
    classifier = RequestClassifier(TokenCounter(), None, SensitivityScanner())
    request = RouteRequest("r", Endpoint.CHAT, "azure-baa", {
        "model": "azure-baa", "messages": [{"role": "user", "content": PHI_TEXT}]})
    result = asyncio.run(explain(classifier, policy, TenantContext("t", "acme", "k"), request))
    assert result["rule"] == "health-to-baa" and result["primary"] == "azure-baa"
    assert result["approvals"] == {"azure-baa": "BAA-2026-017"}
    assert ("approval   azure-baa: BAA-2026-017 (sensitivity phi sent unredacted under it)"
            in render_table(result))
