"""A shadow judgement sends a request only where the policy would have allowed it."""

from __future__ import annotations

from gateway.policy.loader import PolicySet, parse_policy
from gateway.routing.shadow_guard import may_receive

POLICY = """version: 1
backends:
  - {name: home, provider: vllm, base_url: "http://h:1/v1", model: m, context_window: 100}
  - {name: away, provider: openai, base_url: "https://a/v1", model: m, context_window: 100,
     zone: external, api_key_env: K}
models: {auto: [home, away]}
rules:
  - {name: sensitive-home, when: {sensitivity: [pii, phi, secret]}, allow_zones: [self_hosted]}
  - {name: masked, when: {model: [masked]}, redact: true}
  - {name: only-home, when: {tags: [home]}, allow_backends: [home]}
"""


def policy() -> PolicySet:
    return parse_policy(POLICY)


def test_the_fired_rules_zones_and_backends_hold() -> None:
    p = policy()
    home, away = p.backends["home"], p.backends["away"]
    assert not may_receive(p, "sensitive-home", True, False, away)
    assert may_receive(p, "sensitive-home", True, False, home)
    assert not may_receive(p, "only-home", False, False, away)
    assert may_receive(p, "default", False, False, away)


def test_a_redacted_request_never_leaves_self_hosted_as_written() -> None:
    p = policy()
    assert not may_receive(p, "masked", True, True, p.backends["away"])
    assert may_receive(p, "masked", True, True, p.backends["home"])
    assert may_receive(p, "masked", False, False, p.backends["away"])
