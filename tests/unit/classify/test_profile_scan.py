"""The classify step scans everything that would leave the zone, tool-call arguments too."""

from __future__ import annotations

from gateway.classify.profiler import RequestClassifier, scan_text
from gateway.classify.sensitivity import SensitivityScanner
from gateway.classify.tokens import TokenCounter
from gateway.policy.engine import decide
from gateway.policy.loader import parse_policy
from gateway.types import Endpoint, FleetSnapshot, RouteRequest, TenantContext

CHAT = {"messages": [
    {"role": "user", "content": "Book the usual table."},
    {"role": "assistant", "content": None, "tool_calls": [{
        "id": "c1", "type": "function",
        "function": {"name": "book", "arguments": '{"contact": "dana.wells@gmail.com"}'}}]},
]}


def test_tool_call_arguments_are_part_of_the_scanned_text() -> None:
    assert "dana.wells@gmail.com" in scan_text(Endpoint.CHAT, CHAT)


async def test_a_finding_only_in_tool_arguments_marks_the_request_sensitive() -> None:
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    profile = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", CHAT))
    assert profile.sensitivity == ("pii",)
    assert [s.type for s in profile.spans] == ["email"]


async def test_an_email_in_the_user_field_marks_the_request_sensitive() -> None:
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    payload = {"user": "dana.wells@gmail.com",
               "messages": [{"role": "user", "content": "Summarise our call notes."}]}
    profile = await classifier.profile(RouteRequest("r", Endpoint.CHAT, "m", payload))
    assert profile.sensitivity == ("pii",) and [s.type for s in profile.spans] == ["email"]


async def test_completions_scan_and_redact_the_user_field_and_every_prompt_of_a_batch() -> None:
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    payload = {"prompt": ["Write to dana.wells@gmail.com", "Hello", [1, 2]],
               "user": "marta.kowalczyk84@gmail.com", "metadata": {"k": "v"}}
    request = RouteRequest("r", Endpoint.COMPLETIONS, "m", payload)
    assert "marta.kowalczyk84@gmail.com" in scan_text(Endpoint.COMPLETIONS, payload)
    profile = await classifier.profile(request)
    assert [s.type for s in profile.spans] == ["email", "email"]
    redacted, mapping = classifier.redact(request)
    assert redacted["prompt"] == ["Write to [EMAIL_1]", "Hello", [1, 2]]
    assert redacted["user"] == "[EMAIL_2]" and redacted["metadata"] == {"k": "v"}
    assert len(mapping) == 2 and payload["user"] == "marta.kowalczyk84@gmail.com"


STAND_INS = ("Reply to jrmccalx@example.com, card 4242 4242 4242 4242, key AKIAIOSFODNN7EXAMPLE,"
             " slack xoxb-00000-00000-EXAMPLENOTAREALTOKEN.")
REDACTING = """\
version: 1
backends:
  - name: away
    provider: openai_compat
    base_url: http://127.0.0.1:9/v1
    model: m
    zone: external
    context_window: 8192
    price_per_mtok_usd: {input: 1.0, output: 2.0}
models:
  auto: [away]
rules:
  - name: redact-going-out
    redact: true
"""


async def test_stand_ins_route_as_nothing_yet_a_redacting_route_masks_them() -> None:
    """Reserved stand-ins leave the categories (what rules match on) and the findings as
    they were, but the decision still redacts, and the redacted copy masks every one."""
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    request = RouteRequest("r", Endpoint.CHAT, "auto",
                           {"messages": [{"role": "user", "content": STAND_INS}]})
    profile = await classifier.profile(request)
    assert profile.sensitivity == () and profile.spans == ()
    assert [s.type for s in profile.reserved_spans] == [
        "email", "payment_card", "secret.aws_access_key", "secret.slack_token"]
    decision = decide(request, profile, TenantContext("t", "acme", "k"), FleetSnapshot(),
                      parse_policy(REDACTING))
    assert decision.redact
    redacted, _ = classifier.redact(request)
    assert redacted["messages"][0]["content"] == (
        "Reply to [EMAIL_1], card [PAYMENT_CARD_1], key [SECRET_1], slack [SECRET_2].")
    clean = RouteRequest("r", Endpoint.CHAT, "auto",
                         {"messages": [{"role": "user", "content": "Hello there"}]})
    assert not decide(clean, await classifier.profile(clean), TenantContext("t", "acme", "k"),
                      FleetSnapshot(), parse_policy(REDACTING)).redact


async def test_findings_below_min_confidence_are_masked_but_not_routed_on() -> None:
    classifier = RequestClassifier(TokenCounter(), sensitivity=SensitivityScanner())
    word_problem = RouteRequest("r", Endpoint.CHAT, "auto", {"messages": [{
        "role": "user", "content": "James writes a 3-page letter to 2 friends twice a week."}]})
    strict = await classifier.profile(word_problem)
    relaxed = await classifier.profile(word_problem, min_confidence=0.7)
    assert strict.sensitivity == ("pii",) and [s.type for s in strict.spans] == ["person"]
    assert relaxed.sensitivity == () and relaxed.spans == ()
    assert [(s.type, s.confidence) for s in relaxed.reserved_spans] == [("person", 0.65)]
    redacted, _ = classifier.redact(word_problem, profile=relaxed)
    assert redacted["messages"][0]["content"].startswith("[PERSON_1] writes")
    full_name = RouteRequest("r", Endpoint.CHAT, "auto", {"messages": [{
        "role": "user", "content": "Please email Ada Lovelace about the invoice."}]})
    assert (await classifier.profile(full_name, min_confidence=0.7)).sensitivity == ("pii",)
