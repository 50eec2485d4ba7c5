"""A tenant's own sensitivity detectors: declared in the policy (validated there, with the
file, line and key of a mistake), found beside the built-in detectors on every request of
that tenant only, inline and in the worker pool alike, and masked by redaction."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from gateway.classify.profiler import RequestClassifier
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.loader import PolicyError, parse_policy
from gateway.types import Endpoint, RouteRequest, TenantDetector

POLICY = """\
version: 1
backends:
  - {name: a, provider: vllm, base_url: 'http://127.0.0.1:9001/v1', model: m,
     context_window: 4096}
tenants:
  research:
    detectors:
      - {name: project_code, category: confidential, regex: '\\bPRJ-\\d{4}\\b'}
      - {name: codenames, category: confidential, words: [bluebird, night heron]}
  other: {}
"""
TEXT = "Status of PRJ-0042 and of Night Heron, for ada@corp.io."


def chat(text: str) -> RouteRequest:
    return RouteRequest("r", Endpoint.CHAT, "a",
                        {"model": "a", "messages": [{"role": "user", "content": text}]})


def test_the_policy_compiles_each_tenants_detectors() -> None:
    policy = parse_policy(POLICY)
    assert policy.tenant_detectors("research") == (
        TenantDetector("project_code", "confidential", r"\bPRJ-\d{4}\b"),
        TenantDetector("codenames", "confidential", None, ("bluebird", "night heron")),
    )
    assert policy.tenant_detectors("other") == () == policy.tenant_detectors("nobody")


@pytest.mark.parametrize(("line", "why"), [
    ("{name: bad, category: confidential, regex: '(unclosed'}", "does not compile"),
    ("{name: bad, category: confidential, regex: 'x*'}", "matches empty text"),
    ("{name: bad, category: confidential, regex: 'x', words: [y]}", "exactly one"),
    ("{name: bad, category: confidential, words: ['  ']}", "words is empty"),
    ("{name: Bad-Name, category: confidential, words: [y]}", "pattern"),
])
def test_a_broken_detector_is_refused_with_where_it_is(line: str, why: str) -> None:
    broken = POLICY.replace("{name: codenames, category: confidential, words: [bluebird, "
                            "night heron]}", line)
    with pytest.raises(PolicyError, match=why) as info:
        parse_policy(broken, "p.yaml")
    (problem,) = info.value.problems
    assert problem.file == "p.yaml" and problem.line == 9
    assert problem.path.startswith("tenants.research.detectors[1]")


def classifier(executor: ThreadPoolExecutor | None = None) -> RequestClassifier:
    return RequestClassifier(TokenCounter(), None, SensitivityScanner(), executor)


def test_a_tenants_detectors_find_their_spans_beside_the_built_in_ones() -> None:
    detectors = parse_policy(POLICY).tenant_detectors("research")
    mine = asyncio.run(classifier().profile(chat(TEXT), detectors=detectors))
    assert mine.sensitivity == ("confidential", "pii")
    assert {(s.type, TEXT[s.start:s.end]) for s in mine.spans} == {
        ("custom.project_code", "PRJ-0042"), ("custom.codenames", "Night Heron"),
        ("email", "ada@corp.io")}
    theirs = asyncio.run(classifier().profile(chat(TEXT)))
    assert theirs.sensitivity == ("pii",)


def test_long_prompts_scanned_in_the_worker_pool_use_the_tenants_detectors_too() -> None:
    detectors = parse_policy(POLICY).tenant_detectors("research")
    text = "Plain filler text without anything to find. " * 1000 + TEXT
    with ThreadPoolExecutor(1) as pool:
        profile = asyncio.run(classifier(pool).profile(chat(text), detectors=detectors))
    assert profile.sensitivity == ("confidential", "pii")


def test_redaction_masks_a_tenants_findings() -> None:
    detectors = parse_policy(POLICY).tenant_detectors("research")
    payload, mapping = classifier().redact(chat(TEXT), detectors)
    sent = payload["messages"][0]["content"]
    assert "PRJ-0042" not in sent and "Night Heron" not in sent and "ada@corp.io" not in sent
    assert len(mapping) == 3
    assert classifier().redact_text(
        "see PRJ-0042", classifier().redaction_scanner(chat(TEXT), detectors)) != "see PRJ-0042"
