"""`gateway policy explain` shows the findings a request was routed on, and those it was not
(stand-ins, and findings below the policy's min_confidence) with their confidence, and the
findings the policy's allowed values took out."""

from __future__ import annotations

import asyncio

from gateway.classify.profiler import RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.loader import parse_policy
from gateway.routing.explain import describe_profile, explain, render_table
from gateway.types import (
    Complexity,
    Endpoint,
    Profile,
    RouteRequest,
    SensitiveSpan,
    Task,
    TenantContext,
)


def test_findings_not_routed_on_are_listed_with_their_confidence() -> None:
    profile = Profile(
        prompt_tokens=12, max_output_tokens=None, sensitivity=("pii",),
        spans=(SensitiveSpan("email", "pii", 30, 45, 0.95),),
        reserved_spans=(SensitiveSpan("person", "pii", 0, 5, 0.65),),
    )
    described = describe_profile(profile)
    assert described["findings"] == [{"type": "email", "start": 30, "end": 45}]
    assert described["masked_only"] == [
        {"type": "person", "start": 0, "end": 5, "confidence": 0.65}]
    table = render_table({"model": "auto", "tenant": "acme", "profile": described,
                          "outcome": "refused",
                          "error": {"status": 400, "code": "x", "type": "t", "message": "m"}})
    assert "not routed on (masked if redacted): person 0.65" in table


POLICY_WITHOUT_ALLOW = (
    "version: 1\nbackends:\n  - {name: a, provider: vllm, base_url: 'http://127.0.0.1:9/v1', "
    "model: m, context_window: 4096}\n"
)


def test_findings_an_allowlist_took_out_are_listed_as_allowed() -> None:
    policy = parse_policy(POLICY_WITHOUT_ALLOW + "sensitivity:\n  allow:\n"
                          "    - {name: support, values: [help@acme-corp.com]}\n")
    text = "Write to help@acme-corp.com, copy ada@corp.io."
    request = RouteRequest("r", Endpoint.CHAT, "a",
                           {"model": "a", "messages": [{"role": "user", "content": text}]})
    classifier = RequestClassifier(TokenCounter(), None, SensitivityScanner())
    result = asyncio.run(explain(classifier, policy, TenantContext("t", "acme", "k"), request))
    profile = result["profile"]
    assert profile["findings"] == [{"type": "email", "start": 34, "end": 45}]
    assert profile["allowed"] == [{"type": "email", "start": 9, "end": 27}]
    assert "allowed by the policy (not routed on, not masked): email 9-27" in render_table(result)
    # Without the allowlist the address is a finding, and nothing is listed as allowed.
    plain = parse_policy(POLICY_WITHOUT_ALLOW)
    result = asyncio.run(explain(classifier, plain, TenantContext("t", "acme", "k"), request))
    assert len(result["profile"]["findings"]) == 2 and result["profile"]["allowed"] == []


def test_the_task_type_is_shown_with_its_probability() -> None:
    profile = Profile(prompt_tokens=12, max_output_tokens=None, task=Task("code", 0.91234))
    described = describe_profile(profile)
    assert described["task"] == {"type": "code", "p": 0.9123}
    table = render_table({"model": "auto", "tenant": "acme", "profile": described,
                          "outcome": "refused",
                          "error": {"status": 400, "code": "x", "type": "t", "message": "m"}})
    assert "task code (p 0.9123)" in table
    assert describe_profile(Profile(prompt_tokens=1, max_output_tokens=None))["task"] is None


def test_a_follow_up_rated_by_an_earlier_turn_says_so() -> None:
    profile = Profile(prompt_tokens=40, max_output_tokens=None,
                      complexity=Complexity(0.71, "high", turns_back=1))
    described = describe_profile(profile)
    assert described["complexity"] == {"p_strong": 0.71, "class": "high", "turns_back": 1}
    table = render_table({"model": "auto", "tenant": "acme", "profile": described,
                          "outcome": "refused",
                          "error": {"status": 400, "code": "x", "type": "t", "message": "m"}})
    assert "complexity high (p_strong 0.71, from the user message 1 turn(s) before the last)" \
        in table
    alone = describe_profile(Profile(prompt_tokens=4, max_output_tokens=None,
                                     complexity=Complexity(0.1, "low")))
    assert alone["complexity"] == {"p_strong": 0.1, "class": "low"}
