"""Values declared public in the policy (`sensitivity.allow`, and a tenant's own `allow`): a
finding whose whole text is one of them is neither routed on nor masked, inline, in the
worker pool and from a second-opinion finder alike; anything else is found as before."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from gateway.classify.profiler import ExtraFinder, RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.loader import PolicyError, parse_policy
from gateway.types import Endpoint, Profile, RouteRequest, SensitiveSpan, TenantDetector

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: 'http://127.0.0.1:9001/v1', model: m,
     context_window: 4096}
sensitivity:
  allow:
    - {name: support, values: [help@acme-corp.com, '+1 415 555 0100']}
tenants:
  web:
    allow:
      - {name: browser_key, regex: 'AIzaSyB[A-Za-z0-9_-]{32}'}
  other: {}
"""
BROWSER_KEY = "AIzaSyBq3xZ9kLmN2pQr7sTuVw4xYz8AbCdEfGh"
TEXT = (f"Mail help@acme-corp.com or call +1 415 555 0100. Our maps key is {BROWSER_KEY}. "
        "Escalations: ada@corp.io.")


def chat(text: str) -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, "a",
                        {"model": "a", "messages": [{"role": "user", "content": text}]})


def classifier(
    executor: ThreadPoolExecutor | None = None, extra: ExtraFinder | None = None
) -> RequestClassifier:
    return RequestClassifier(TokenCounter(), None, SensitivityScanner(), executor, extra=extra)


def found(profile: Profile, text: str) -> set[tuple[str, str]]:
    return {(s.type, text[s.start:s.end]) for s in (*profile.spans, *profile.reserved_spans)}


def test_the_policys_allowed_values_reach_every_tenant_and_a_tenants_only_it() -> None:
    policy = parse_policy(POLICY)
    shared = TenantDetector("support", "", None, ("help@acme-corp.com", "+1 415 555 0100"),
                            allow=True)
    assert policy.tenant_detectors("other") == (shared,)
    assert policy.tenant_detectors("not-in-the-policy") == (shared,)
    assert policy.tenant_detectors("web") == (
        shared, TenantDetector("browser_key", "", r"AIzaSyB[A-Za-z0-9_-]{32}", allow=True))
    assert parse_policy(POLICY.split("sensitivity:")[0]).tenant_detectors("web") == ()


def test_allowed_values_are_not_findings_the_rest_are() -> None:
    policy = parse_policy(POLICY)
    everything = asyncio.run(classifier().profile(chat(TEXT)))
    assert {t for t, _ in found(everything, TEXT)} == {"email", "phone", "secret.gcp_api_key"}
    web = asyncio.run(classifier().profile(chat(TEXT), detectors=policy.tenant_detectors("web")))
    assert found(web, TEXT) == {("email", "ada@corp.io")}
    other = asyncio.run(classifier().profile(
        chat(TEXT), detectors=policy.tenant_detectors("other")))
    assert found(other, TEXT) == {("email", "ada@corp.io"),
                                  ("secret.gcp_api_key", BROWSER_KEY)}


def test_only_a_whole_finding_is_allowed() -> None:
    # The allowed address is part of a longer one, and the key differs in one character.
    text = "Write to help@acme-corp.com.au with key " + BROWSER_KEY.replace("B", "C", 1)
    profile = asyncio.run(classifier().profile(
        chat(text), detectors=parse_policy(POLICY).tenant_detectors("web")))
    assert {t for t, _ in found(profile, text)} == {"email", "secret.gcp_api_key"}


def test_long_prompts_scanned_in_the_worker_pool_drop_allowed_values_too() -> None:
    text = "Plain filler text without anything to find. " * 1000 + TEXT
    detectors = parse_policy(POLICY).tenant_detectors("web")
    with ThreadPoolExecutor(1) as pool:
        profile = asyncio.run(classifier(pool).profile(chat(text), detectors=detectors))
    assert found(profile, text) == {("email", "ada@corp.io")}


class NameFinder:
    """A second opinion that calls the support address's local part a person."""

    async def find(self, text: str) -> list[SensitiveSpan]:
        start = text.index("help@acme-corp.com")
        return [SensitiveSpan("person", "pii", start, start + len("help@acme-corp.com"), 0.9)]


def test_a_second_opinions_findings_are_allowed_the_same_way() -> None:
    detectors = parse_policy(POLICY).tenant_detectors("web")
    profile = asyncio.run(classifier(extra=NameFinder()).profile(chat(TEXT),
                                                                 detectors=detectors))
    assert found(profile, TEXT) == {("email", "ada@corp.io")}


def test_redaction_leaves_allowed_values_in_place() -> None:
    detectors = parse_policy(POLICY).tenant_detectors("web")
    profile = asyncio.run(classifier().profile(chat(TEXT), detectors=detectors))
    payload, mapping = classifier().redact(chat(TEXT), detectors, profile)
    sent = payload["messages"][0]["content"]
    assert "help@acme-corp.com" in sent and "+1 415 555 0100" in sent and BROWSER_KEY in sent
    assert "ada@corp.io" not in sent and len(mapping) == 1


@pytest.mark.parametrize(("entry", "why"), [
    ("{name: bad, regex: '(unclosed'}", "does not compile"),
    ("{name: bad, regex: 'x*'}", "matches empty text"),
    ("{name: bad, regex: '.+'}", "allows anything"),
    ("{name: bad, regex: '[\\w@. ]+'}", "allows anything"),
    ("{name: bad, regex: 'x', values: [y]}", "exactly one"),
    ("{name: bad, values: []}", "values is empty"),
    ("{name: bad, values: [ok, '  ']}", "empty value"),
    ("{name: bad, values: [ok], category: pii}", "unknown key .category.; valid here: name"),
])
def test_a_broken_allow_entry_is_refused_with_where_it_is(entry: str, why: str) -> None:
    broken = POLICY.replace("{name: browser_key, regex: 'AIzaSyB[A-Za-z0-9_-]{32}'}", entry)
    with pytest.raises(PolicyError, match=why) as info:
        parse_policy(broken, "p.yaml")
    (problem,) = info.value.problems
    assert problem.file == "p.yaml" and problem.line == 11
    assert problem.path.startswith("tenants.web.allow[0]")
