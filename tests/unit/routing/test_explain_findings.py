"""`gateway policy explain` shows the findings a request was routed on, and those it was not
(stand-ins, and findings below the policy's min_confidence) with their confidence."""

from __future__ import annotations

from gateway.routing.explain import describe_profile, render_table
from gateway.types import Profile, SensitiveSpan


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
